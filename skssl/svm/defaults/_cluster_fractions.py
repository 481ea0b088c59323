"""Class fractions from clusters of the rows, where the rows cluster by class and the labels say otherwise.

TSVM, deterministic annealing and Potts DA enforce the class fractions of
the unlabeled rows exactly (Sindhwani & Keerthi 2006, sections 2-3), and with
``positive_fraction=None`` they estimate them from the labeled rows, which a
few labels do badly. :func:`fractions_from_clusters` runs k-means with one
cluster per class on all rows (rows of many columns in their latent space,
by direction), matches clusters to classes by the labels, and takes the
clusters' shares of the unlabeled rows when at least ``MIN_PURITY`` of the
labeled weight and more than half of each class's falls in its own cluster,
and the shares differ from the labels' by more than one standard error.
The k-means start is drawn from the distinct rows in an order of their
content, so the answer depends neither on the order of the rows nor on
repeats versus weights.

Design decisions: user guide, Implementation decisions: linear S3VMs,
"Class fractions from clusters".
"""

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.cluster import KMeans
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from ..kernels._row_order import distinct_rows
from ..kernels._validation import on_used_columns

__all__ = ["RowClusters", "fractions_from_clusters", "MIN_PURITY", "MIN_LABELED", "MIN_CLASS_SHARE"]

#: Least share of the labeled weight in its own class's cluster for the clusters to count as the classes.
MIN_PURITY = 0.9
#: Least labeled weight (rows count by their weight), and at least twice the number of classes.
MIN_LABELED = 10
#: Least share of each class's labeled weight in its own cluster.
MIN_CLASS_SHARE = 0.5
#: k-means++ restarts and seed, and the most distinct rows it starts from.
N_INIT, SEED, SAMPLE = 3, 0, 2000
#: Rows of more columns are clustered in a latent space of this many dimensions (:func:`_latent_directions`),
#: where restarts cost little: k-means++ is restarted this many times there.
LATENT_DIM, LATENT_N_INIT = 100, 30
#: Columns per block of the projection on the latent space.
PROJECTION_BLOCK = 4096


class RowClusters:
    """The k-means clusters of one fit's rows, run at most once per number of clusters and shared.

    The clusters depend on the rows and their weights only, never on which rows are labeled: the fits that a
    fit starts on its own rows with some labels hidden (the folds of the safeguard's check) read the same
    clusters, and each matches them to classes by its own labels.

    Parameters
    ----------
    X : {ndarray, CSR matrix} of shape (n_samples, n_features)
        All rows of the fit (float64).
    sample_weight : ndarray of shape (n_samples,) or None
        Row weights (``None``: unit weights).
    """

    def __init__(self, X, sample_weight=None):
        self.X = X
        self.weight = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self._labels = {}

    def labels(self, n_clusters):
        """The cluster of every row for ``n_clusters`` clusters (:func:`_kmeans_labels`), computed once."""
        if n_clusters not in self._labels:
            self._labels[n_clusters] = _kmeans_labels(self.X, n_clusters, self.weight)
        return self._labels[n_clusters]


def fractions_from_clusters(X, y_enc, mask, fractions, sample_weight=None, clusters=None):
    """The class fractions of the unlabeled rows: the clusters' where they are the classes and the labels are off.

    Parameters
    ----------
    X : {ndarray, CSR matrix} of shape (n_samples, n_features)
        All rows of the fit (float64).
    y_enc : ndarray of shape (n_samples,)
        Class indices ``0 .. n_classes - 1`` on the labeled rows.
    mask : ndarray of bool of shape (n_samples,)
        The labeled rows.
    fractions : ndarray of shape (n_classes,)
        The fractions estimated from the labeled rows.
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights (``None``: unit weights).
    clusters : RowClusters, default=None
        The clusters of these rows and weights, where another fit on them already made (or may need) them;
        ``None``: k-means runs here.

    Returns
    -------
    fractions : ndarray of shape (n_classes,)
        The clusters' shares of the unlabeled rows, or ``fractions`` itself
        (the same object) where the rule does not apply.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.defaults._cluster_fractions import fractions_from_clusters
    >>> rng = np.random.RandomState(0)
    >>> X = np.vstack([rng.randn(100, 2) - 5, rng.randn(100, 2) + 5])
    >>> y_enc = np.repeat([0, 1], 100)
    >>> mask = np.zeros(200, dtype=bool)
    >>> mask[:16] = mask[100:104] = True  # 16 labels of class 0, 4 of class 1: 0.8 / 0.2
    >>> fractions_from_clusters(X, y_enc, mask, np.array([0.8, 0.2])).round(3).tolist()
    [0.467, 0.533]
    """
    n_classes = fractions.shape[0]
    labeled = np.flatnonzero(mask)
    unlabeled = np.flatnonzero(~mask)
    weight = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    # Rows count by their weight, so that a row of weight 2 is two rows here as everywhere in the fit.
    n_labeled, n_unlabeled = weight[labeled].sum(), weight[unlabeled].sum()
    if n_labeled < max(MIN_LABELED, 2 * n_classes) or n_unlabeled < 2 * n_classes:
        return fractions
    if sp.issparse(X) and X.nnz >= np.iinfo(np.int32).max:
        return fractions  # scikit-learn's k-means takes 32-bit sparse indices only
    clusters = _kmeans_labels(X, n_classes, weight) if clusters is None else clusters.labels(n_classes)
    counts = np.zeros((n_classes, n_classes))
    np.add.at(counts, (clusters[labeled], y_enc[labeled]), weight[labeled])
    rows, cols = linear_sum_assignment(counts, maximize=True)
    as_class = np.empty(n_classes, dtype=np.intp)
    as_class[rows] = cols
    purity = counts[rows, cols].sum() / counts.sum()
    labeled_per_class = counts.sum(axis=0)
    own_share = np.divide(
        counts[rows, cols], labeled_per_class[cols], out=np.zeros(n_classes), where=labeled_per_class[cols] > 0
    )
    if purity < MIN_PURITY or not np.all(own_share > MIN_CLASS_SHARE):
        return fractions  # not the classes, or a class (a small one, say) mostly outside its own cluster
    shares = np.bincount(as_class[clusters[unlabeled]], weights=weight[unlabeled], minlength=n_classes)
    shares = shares / shares.sum()
    if not np.all(shares > 0):
        return fractions
    spread = np.sqrt(fractions * (1.0 - fractions) / n_labeled)
    if not np.any(np.abs(shares - fractions) > spread):
        return fractions
    return shares


def _kmeans_labels(X, n_clusters, weight):
    """Cluster of every row: k-means++ on a canonical sample of the distinct rows, then Lloyd on all rows.

    The start must not depend on where the rows are or on whether a row is repeated or weighted: k-means++
    draws rows at random by position. So the distinct rows are put in an order of their content, a repeated
    row's weights summed, and k-means++ (``N_INIT`` restarts, seed ``SEED``) runs on at most ``SAMPLE`` of them
    drawn from that order; its centres start Lloyd's iterations on every row with its weight, run until no row
    changes cluster (``tol=0``: scikit-learn's default tolerance scales with the unweighted variance of the
    rows, which repeating a row changes). Rows of more than ``LATENT_DIM`` columns are clustered by direction
    in their latent space (:func:`_latent_directions`).
    """
    # k-means on the columns that hold an entry: its centres are 0 on the others (skssl.svm.kernels._validation).
    X = _int32_indices(on_used_columns(X)[0])
    distinct, group = distinct_rows(X)
    distinct_weight = np.bincount(group, weights=weight, minlength=distinct.shape[0])
    if distinct.shape[0] > SAMPLE:
        keep = np.sort(np.random.RandomState(SEED).choice(distinct.shape[0], SAMPLE, replace=False))
        distinct, distinct_weight = distinct[keep], distinct_weight[keep]
    positive = distinct_weight > 0
    distinct, distinct_weight = distinct[positive], distinct_weight[positive]
    if distinct.shape[0] < n_clusters:
        return np.zeros(X.shape[0], dtype=np.intp)  # fewer distinct rows than classes: one cluster, no purity
    # One OpenMP thread. scikit-learn's Lloyd iterations add the threads' partial sums of the centres in the order
    # the threads finish, so with three threads or more the centres vary in their last digits from run to run (and
    # with the machine's cores), and with them, rarely, a cluster; and OpenMP threads waiting for work between the
    # many small iterations cost up to ten times the work on a busy machine (measured on pcmac).
    if X.shape[1] <= LATENT_DIM:
        with threadpool_limits(1, user_api="openmp"):
            return _lloyd_from_sample(X, distinct, distinct_weight, weight, n_clusters, N_INIT)
    # In the latent space the rows are short and dense.
    Z = _latent_directions(X, X[distinct], distinct_weight)
    with threadpool_limits(1):
        return _lloyd_from_sample(Z, distinct, distinct_weight, weight, n_clusters, LATENT_N_INIT)


def _lloyd_from_sample(X, distinct, distinct_weight, weight, n_clusters, n_init):
    """k-means++ (``n_init`` restarts) on the sample's rows, then Lloyd's iterations on all rows, to the end."""
    start = KMeans(n_clusters, n_init=n_init, random_state=SEED).fit(X[distinct], sample_weight=distinct_weight)
    final = KMeans(n_clusters, init=start.cluster_centers_, n_init=1, tol=0.0)
    return final.fit(X, sample_weight=weight).labels_


def _latent_directions(X, sample, sample_weight):
    """All rows projected on the ``LATENT_DIM`` leading right singular vectors of the weighted sample, unit length.

    Latent semantic analysis followed by k-means on the directions (as scikit-learn's text-clustering example
    does): in the raw space of many sparse columns k-means' restarts end in very different partitions of
    almost equal inertia (on pcmac the clusters' share of a class ranged from 0.42 to 0.54 over seeds), and in
    the leading singular directions they agree. The decomposition is that of the canonical sample of distinct
    rows that also starts k-means, a row of weight ``w`` scaled by ``sqrt(w)`` as ``w`` copies of it would count,
    so it depends neither on the order of the rows nor on repeats.

    Written here rather than with ``TruncatedSVD``, whose singular vectors and random start are as long as a
    row (``LATENT_DIM`` times ``coef_``): the leading eigenvectors ``U`` of the sample's Gram matrix are found
    by Lanczos iterations on products with the sample (memory of the sample's size), and the rows' projections
    ``X V`` with ``V = A^T U / s`` are summed over blocks of columns, so no array as long as a row is formed.
    """
    scale = np.sqrt(sample_weight)
    scaled = sp.diags(scale) @ sample if sp.issparse(sample) else sample * scale[:, None]
    n_sample = scaled.shape[0]
    k = min(LATENT_DIM, n_sample - 1)
    # One BLAS thread: the products are small, and on a busy machine idle BLAS threads spinning for work cost
    # several times the decomposition (measured on 20 Newsgroups).
    with threadpool_limits(1, user_api="blas"):
        if n_sample <= 3 * k:
            gram = scaled @ scaled.T
            eigenvalues, vectors = np.linalg.eigh(gram.toarray() if sp.issparse(gram) else gram)
        else:
            # The transpose formed once: forming scipy's transposed view took a sixth of each product.
            scaled_t = scaled.T
            gram = LinearOperator((n_sample, n_sample), matvec=lambda v: scaled @ (scaled_t @ v), dtype=np.float64)
            v0 = np.random.RandomState(SEED).uniform(0.5, 1.5, n_sample)
            eigenvalues, vectors = eigsh(gram, k=k, which="LA", v0=v0)
        order = np.argsort(eigenvalues)[::-1][:k]
        eigenvalues, vectors = eigenvalues[order], vectors[:, order]
        kept = eigenvalues > eigenvalues[0] * n_sample * np.finfo(np.float64).eps
        # V = A^T U / s, with A the scaled sample: the sample's own rows carry the scale once more.
        weights = (vectors[:, kept] / np.sqrt(eigenvalues[kept])) * scale[:, None]
        return normalize(_project(X, sample, weights))


def _project(X, sample, weights):
    """``X @ (sample.T @ weights)``, over blocks of ``PROJECTION_BLOCK`` columns where the rows are sparse."""
    if not sp.issparse(X):
        return X @ (sample.T @ weights)
    X, sample = sp.csc_matrix(X), sp.csc_matrix(sample)
    out = np.zeros((X.shape[0], weights.shape[1]))
    for start in range(0, X.shape[1], PROJECTION_BLOCK):
        columns = slice(start, start + PROJECTION_BLOCK)
        out += X[:, columns] @ (sample[:, columns].T @ weights)
    return out


def _int32_indices(X):
    """``X`` with 32-bit sparse indices, which scikit-learn's k-means needs: a new index structure, values shared.

    Both index arrays are checked, for any caller: a fit's ``X`` comes from
    :func:`~skssl.utils.validation.check_sparse_structure`, which already gives both arrays one type, but scipy
    itself keeps an int64 ``indptr`` beside int32 ``indices``. (The caller has ruled out more non-zeros than
    int32 holds.)
    """
    if sp.issparse(X) and (X.indices.dtype != np.int32 or X.indptr.dtype != np.int32):
        return sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    return X
