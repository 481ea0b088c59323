"""The distinct rows of a matrix in the lexicographic order of their values, the same for dense and CSR rows.

Several parts of a fit must not depend on where a row sits, nor on whether it is repeated: the folds of
``alpha="auto"``'s check, of the safeguard's check and of the annealing start, and the k-means start of the
class fractions. They deal the rows in an order of their content, given here by :func:`distinct_rows`:
dense rows as ``np.unique(X, axis=0)`` orders them, CSR rows in exactly that order, worked out from their
non-zeros alone (a most-significant-first radix refinement over tokens ``(sign(v) * (n_features + 1 - c), v)``
of each non-zero ``v`` at column ``c``), so the cost grows with the non-zeros, never with ``n_features``.
Ties are kept in row order, so each distinct row is represented by its first occurrence.

Design decisions: user guide, Implementation decisions: linear S3VMs, "Row order".
"""

import numpy as np
import scipy.sparse as sp

from ._validation import canonical_csr

__all__ = ["distinct_rows"]


def distinct_rows(X):
    """One row index per distinct row, in the lexicographic order of the rows' values, and each row's group.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The rows (not modified).

    Returns
    -------
    first : ndarray of int of shape (n_distinct,)
        The first occurrence of each distinct row, the smallest row first.
    group : ndarray of int of shape (n_samples,)
        The position in ``first`` of each row's distinct row.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from skssl.svm.kernels._row_order import distinct_rows
    >>> X = np.array([[0.0, 2.0], [-1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> first, group = distinct_rows(X)
    >>> first.tolist(), group.tolist()
    ([1, 3, 0], [2, 0, 2, 1])
    >>> [a.tolist() for a in distinct_rows(sp.csr_matrix(X))]
    [[1, 3, 0], [2, 0, 2, 1]]
    """
    if not sp.issparse(X):
        _, first, group = np.unique(np.asarray(X), axis=0, return_index=True, return_inverse=True)
        return first, group.ravel()
    return _csr_distinct_rows(sp.csr_matrix(X))


def _csr_distinct_rows(X):
    """:func:`distinct_rows` of CSR rows, from their non-zeros (see the module's notes)."""
    n_rows, n_features = X.shape
    X = canonical_csr(X)  # duplicates summed, indices sorted (on a copy: the caller's matrix is kept as it is)
    if np.any(X.data == 0):
        X = X.copy()  # stored zeros are skipped, as the dense comparison does not see them
        X.eliminate_zeros()
    lengths = np.diff(X.indptr)
    starts = X.indptr[:-1]

    order = np.arange(n_rows)  # rows in their order so far; ties in row order
    segment_start = np.zeros(n_rows, dtype=bool)  # where each group of rows tied so far begins, by position
    if n_rows:
        segment_start[0] = True
    tied = np.arange(n_rows)  # positions (in ``order``) of the rows in groups of two or more, still to compare
    segment = np.zeros(n_rows, dtype=np.intp)  # the group of each of those positions, ascending
    depth = 0
    while tied.size:
        rows = order[tied]
        has_token = depth < lengths[rows]
        at = np.where(has_token, starts[rows] + depth, 0)
        if X.nnz:
            token_value = np.where(has_token, X.data[at], 0.0)
            token_rank = np.sign(token_value).astype(np.int64) * (n_features + 1 - X.indices[at].astype(np.int64))
        else:
            token_value, token_rank = np.zeros(rows.size), np.zeros(rows.size, dtype=np.int64)
        sort = np.lexsort((token_value, token_rank, segment))  # stable: ties stay in row order
        rows, segment = rows[sort], segment[sort]
        token_rank, token_value, has_token = token_rank[sort], token_value[sort], has_token[sort]
        order[tied] = rows  # ``tied`` is ascending and each group's positions are contiguous
        new_start = np.ones(tied.size, dtype=bool)
        new_start[1:] = (
            (segment[1:] != segment[:-1]) | (token_rank[1:] != token_rank[:-1]) | (token_value[1:] != token_value[:-1])
        )
        segment_start[tied] = new_start
        # A group stays tied while it has two or more rows that have not ended (rows that end together are equal).
        group_id = np.cumsum(new_start) - 1
        keep = (np.bincount(group_id)[group_id] > 1) & has_token
        tied, segment = tied[keep], group_id[keep]
        depth += 1
    group_of_position = np.cumsum(segment_start) - 1
    group = np.empty(n_rows, dtype=np.intp)
    group[order] = group_of_position
    return order[segment_start], group
