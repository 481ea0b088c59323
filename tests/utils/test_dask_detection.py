"""Dask arrays are recognised without importing Dask (skssl.utils._dask)."""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.utils._dask import is_dask_array


def test_only_dask_arrays_are_dask_arrays():
    assert not is_dask_array(np.zeros((2, 2)))
    assert not is_dask_array(sp.csr_matrix((2, 2)))
    assert not is_dask_array([[1.0, 2.0]])
    da = pytest.importorskip("dask.array")
    assert is_dask_array(da.zeros((4, 2), chunks=2))
    assert not is_dask_array(da)  # the module itself is no array
