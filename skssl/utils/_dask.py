"""Prediction on Dask arrays: every block of rows is scored on the worker that holds it.

Predictions are lazy Dask arrays with the input's row chunks and ``score``
is reduced on the cluster, as dask-ml's ``ParallelPostFit`` does. Dask is
detected by duck typing and imported only when given a Dask array.
"""

import numpy as np

__all__ = ["is_dask_array", "map_row_blocks", "labeled_accuracy"]


def is_dask_array(X):
    """Whether ``X`` is a Dask array (duck-typed: Dask is not imported)."""
    return type(X).__module__.partition(".")[0] == "dask" and hasattr(X, "map_blocks") and hasattr(X, "chunks")


def map_row_blocks(func, X, *, n_columns=None, dtype=np.float64):
    """``func`` applied lazily to every row block of ``X`` (``n_columns=None``: one value per row)."""
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D Dask array of rows, got {X.ndim} dimension(s).")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    empty_shape = (0,) if n_columns is None else (0, n_columns)

    def on_block(block):
        # estimators reject inputs without rows
        return np.empty(empty_shape, dtype=dtype) if block.shape[0] == 0 else func(block)

    if n_columns is None:
        return X.map_blocks(on_block, drop_axis=1, dtype=dtype, meta=np.empty((0,), dtype=dtype))
    return X.map_blocks(on_block, chunks=(X.chunks[0], (n_columns,)), dtype=dtype, meta=np.empty((0, 0), dtype=dtype))


def labeled_accuracy(predicted, y, sample_weight=None, *, unlabeled=-1):
    """Weighted accuracy of lazy ``predicted`` on the rows where ``y != unlabeled``, reduced on the cluster."""
    import dask
    import dask.array as da

    y = da.asarray(y).rechunk((predicted.chunks[0],))
    labeled = y != unlabeled
    weight = labeled if sample_weight is None else labeled * da.asarray(sample_weight).rechunk((predicted.chunks[0],))
    correct, total = dask.compute((weight * (predicted == y)).sum(), weight.sum())
    if not labeled.any().compute():
        raise ValueError("Cannot score: every row of y is -1 (unlabeled).")
    return float(correct / total)
