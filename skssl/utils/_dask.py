"""Prediction on Dask arrays: every block of rows is scored on the worker that holds it.

``decision_function`` and ``predict`` map the fitted estimator over the
array's row blocks (``map_blocks``, after rechunking to whole rows) and return
a lazy Dask array with the same row chunks; ``score`` sums the blocks'
counts of correct predictions on the cluster and returns a float. This is
what dask-ml's ``ParallelPostFit`` does, for dense and ``scipy.sparse``
chunks alike. Dask is detected by duck typing, so skssl imports it only when
given a Dask array.
"""

import numpy as np

__all__ = ["is_dask_array", "map_row_blocks", "labeled_accuracy"]


def is_dask_array(X):
    """Whether ``X`` is a Dask array (duck-typed: Dask is not imported)."""
    return type(X).__module__.partition(".")[0] == "dask" and hasattr(X, "map_blocks") and hasattr(X, "chunks")


def map_row_blocks(func, X, *, n_columns=None, dtype=np.float64):
    """``func`` applied to every row block of the Dask array ``X``, lazily.

    Parameters
    ----------
    func : callable
        Takes a block of rows (ndarray or sparse matrix) and returns one
        value per row (``n_columns=None``) or an array of ``n_columns``
        columns.
    X : dask.array.Array of shape (n_samples, n_features)
        The rows.
    n_columns : int or None, default=None
        Columns of ``func``'s output; ``None`` for one value per row.
    dtype : dtype, default=np.float64
        ``func``'s output type.

    Returns
    -------
    out : dask.array.Array of shape (n_samples,) or (n_samples, n_columns)
        With the row chunks of ``X``.
    """
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D Dask array of rows, got {X.ndim} dimension(s).")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    empty_shape = (0,) if n_columns is None else (0, n_columns)

    def on_block(block):
        # an empty chunk scores to an empty result (estimators reject inputs without rows)
        return np.empty(empty_shape, dtype=dtype) if block.shape[0] == 0 else func(block)

    if n_columns is None:
        return X.map_blocks(on_block, drop_axis=1, dtype=dtype, meta=np.empty((0,), dtype=dtype))
    return X.map_blocks(on_block, chunks=(X.chunks[0], (n_columns,)), dtype=dtype, meta=np.empty((0, 0), dtype=dtype))


def labeled_accuracy(predicted, y, sample_weight=None, *, unlabeled=-1):
    """Accuracy of lazy ``predicted`` on the rows where ``y != unlabeled``, reduced on the cluster.

    Parameters
    ----------
    predicted : dask.array.Array of shape (n_samples,)
        Predicted labels.
    y : array-like or dask.array.Array of shape (n_samples,)
        True labels, ``unlabeled`` for rows to ignore.
    sample_weight : array-like or dask.array.Array of shape (n_samples,), default=None
        Row weights.
    unlabeled : int, default=-1
        The label of rows to ignore.

    Returns
    -------
    score : float
        Weighted share of the labeled rows predicted right.
    """
    import dask
    import dask.array as da

    y = da.asarray(y).rechunk((predicted.chunks[0],))
    labeled = y != unlabeled
    weight = labeled if sample_weight is None else labeled * da.asarray(sample_weight).rechunk((predicted.chunks[0],))
    correct, total = dask.compute((weight * (predicted == y)).sum(), weight.sum())
    if not labeled.any().compute():
        raise ValueError("Cannot score: every row of y is -1 (unlabeled).")
    return float(correct / total)
