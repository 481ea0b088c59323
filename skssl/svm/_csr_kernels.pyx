# cython: language_level=3
"""Compiled kernels of the linear solvers: CGLS on CSR or dense row blocks with OpenMP threads, the
outputs of listed rows, the exact line search, and deterministic annealing's mean belief.

The only path of the solvers' products, used through :mod:`skssl.svm.kernels._kernels`.
Every loop over rows is written once, for a fused type of rows: CSR rows
(int or long long indices) or the rows of a C-contiguous dense ``X`` read in
place by index. The copies differ only in ``_row_dot`` and ``_row_axpy``: a
CSR row is summed in column order, as scipy's mat-vec sums it, a dense row
goes to BLAS's ``ddot`` / ``daxpy``. One CGLS iteration's two products,
``q = X p`` and ``X^T (C q)``, are fused into one pass over the rows (``q_i``
is known once row ``i`` is read), so ``X`` is read once per iteration.

The number of blocks is fixed by ``n_jobs`` (it fixes the order of sums);
how many threads run them is chosen at run time by :class:`ThreadSchedule`.

Design decisions: user guide, Implementation decisions: linear S3VMs,
"Compiled kernels and threads".
"""

from contextvars import ContextVar

from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from cython.parallel cimport prange
from libc.math cimport exp, isfinite, sqrt
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

import numpy as np


# Whether this module was compiled with OpenMP: the compiler defines _OPENMP when it is given -fopenmp
# (setup.py's probe decides). Without it Cython's prange loops run in the calling thread, one block after another.
cdef extern from *:
    """
    #ifdef _OPENMP
    #define SKSSL_BUILT_WITH_OPENMP 1
    #else
    #define SKSSL_BUILT_WITH_OPENMP 0
    #endif
    """
    bint SKSSL_BUILT_WITH_OPENMP

#: ``True`` if the kernels were compiled with OpenMP, so that their row blocks can run on several threads.
OPENMP = bool(SKSSL_BUILT_WITH_OPENMP)


ctypedef fused index_t:
    int
    long long


# The dense rows' products: BLAS's ddot and daxpy (scipy's, through the function pointers scipy.linalg.cython_blas
# exports, so building skssl needs no BLAS), one row at a time. Level-1 calls on a row of a few thousand values
# run in the calling thread (OpenBLAS threads them only from 10,000 values on), with the machine's widest vector
# instructions, which this module's portable build does not use. Where scipy's pointers cannot be had, the loops
# below run instead (the same sums in another order).
ctypedef double (*_ddot_t)(int* n, double* dx, int* incx, double* dy, int* incy) noexcept nogil
ctypedef void (*_daxpy_t)(int* n, double* da, double* dx, int* incx, double* dy, int* incy) noexcept nogil
cdef _ddot_t _blas_ddot = NULL
cdef _daxpy_t _blas_daxpy = NULL
cdef int _BLAS_MAX_N = 2147483647


def _load_blas():
    global _blas_ddot, _blas_daxpy
    try:
        from scipy.linalg import cython_blas
        ddot = cython_blas.__pyx_capi__["ddot"]
        daxpy = cython_blas.__pyx_capi__["daxpy"]
        _blas_ddot = <_ddot_t>PyCapsule_GetPointer(ddot, PyCapsule_GetName(ddot))
        _blas_daxpy = <_daxpy_t>PyCapsule_GetPointer(daxpy, PyCapsule_GetName(daxpy))
    except Exception:  # pragma: no cover - a scipy without the capsules: the loops below
        _blas_ddot = NULL
        _blas_daxpy = NULL


_load_blas()


def dense_blas():
    """Whether the dense kernels use scipy's BLAS (``ddot``, ``daxpy``) rather than their own loops."""
    return _blas_ddot != NULL and _blas_daxpy != NULL


cdef inline double _dense_dot(const double* x, const double* v, Py_ssize_t n) noexcept nogil:
    # x . v; without BLAS, four running sums (one sum would chain every multiply-add on the last one's latency).
    cdef Py_ssize_t j = 0
    cdef int m, one = 1
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    if _blas_ddot != NULL and n <= _BLAS_MAX_N:
        m = <int>n
        return _blas_ddot(&m, <double*>x, &one, <double*>v, &one)
    while j + 4 <= n:
        s0 = s0 + x[j] * v[j]
        s1 = s1 + x[j + 1] * v[j + 1]
        s2 = s2 + x[j + 2] * v[j + 2]
        s3 = s3 + x[j + 3] * v[j + 3]
        j = j + 4
    while j < n:
        s0 = s0 + x[j] * v[j]
        j = j + 1
    return (s0 + s1) + (s2 + s3)


cdef inline void _dense_axpy(double a, const double* x, double* out, Py_ssize_t n) noexcept nogil:
    # out += a x
    cdef Py_ssize_t j
    cdef int m, one = 1
    if _blas_daxpy != NULL and n <= _BLAS_MAX_N:
        m = <int>n
        _blas_daxpy(&m, &a, <double*>x, &one, out, &one)
        return
    for j in range(n):
        out[j] += a * x[j]


# ---------------------------------------------------------------------------
# The rows the kernels read, CSR or dense (the fused type rows_t: _Csr32, _Csr64, _Dense), and their two row
# products (see the module docstring).
# ---------------------------------------------------------------------------

# The checked build (SKSSL_CHECKED_KERNELS=1, see setup.py) defines SKSSL_CHECKED_KERNELS: the row products then
# check every index they follow from the caller's arrays (the listed row, its pointers, its columns), as Cython
# checks the memoryview indices of that build. A release build compiles those checks away.
cdef extern from *:
    """
    #ifndef SKSSL_CHECKED_KERNELS
    #define SKSSL_CHECKED_KERNELS 0
    #endif
    """
    bint SKSSL_CHECKED_KERNELS

#: ``True`` in the build with every index checked (``SKSSL_CHECKED_KERNELS=1``); never in a release.
CHECKED = bool(SKSSL_CHECKED_KERNELS)


cdef struct _RowSet:
    # What every kind of rows has: row i of a kernel is row rows[i] of the stored matrix (row i itself when
    # rows is NULL), whose n_stored rows meet vectors of n_cols entries.
    const double* data
    const Py_ssize_t* rows
    Py_ssize_t n_stored
    Py_ssize_t n_cols


cdef struct _Dense:
    # Row r: data[r * n_cols:(r + 1) * n_cols] of the row-major X.
    _RowSet base


cdef struct _Csr32:
    # Row r: the values data[indptr[r]:indptr[r + 1]] at the columns indices[...]; nnz values are stored.
    _RowSet base
    const int* indices
    const int* indptr
    Py_ssize_t nnz


cdef struct _Csr64:
    # _Csr32 with long long indices (scipy's int64 index arrays).
    _RowSet base
    const long long* indices
    const long long* indptr
    Py_ssize_t nnz


ctypedef fused rows_t:
    _Csr32
    _Csr64
    _Dense


cdef enum:
    _CSR32 = 0
    _CSR64 = 1
    _DENSE = 2


cdef struct _Rows:
    # The rows of one kernel call: the member that kind names.
    int kind
    _Csr32 csr32
    _Csr64 csr64
    _Dense dense


cdef class _KernelRows:
    # The rows a kernel call reads: their description, the arrays it points into (held while they are read),
    # how many rows it reads (n_rows), how many the stored matrix has (n_stored), and one past the last stored
    # row it reads (n_reach: the entries an output indexed by stored row needs).
    cdef _Rows r
    cdef object _arrays
    cdef Py_ssize_t n_rows, n_stored, n_reach, n_cols

    cdef _RowSet _describe(self, const double* data, Py_ssize_t n_stored, Py_ssize_t n_cols, rows) except *:
        # The _RowSet of the stored matrix's n_stored rows of n_cols columns, read in the order rows lists them
        # (None: all, in order), after checking that they lie in it.
        cdef _RowSet s
        cdef const Py_ssize_t[::1] listed
        s.data = data
        s.n_stored = self.n_stored = n_stored
        s.n_cols = self.n_cols = n_cols
        s.rows = NULL
        self.n_rows = self.n_reach = n_stored
        if rows is not None:
            listed = rows
            self.n_reach = _check_rows(listed, n_stored)
            self.n_rows = listed.shape[0]
            s.rows = &listed[0] if listed.shape[0] else NULL
        return s


def _csr_rows(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr, Py_ssize_t n_cols,
              rows=None):
    # The rows of the CSR matrix (data, indices, indptr) of n_cols columns listed by rows (None: all, in order).
    cdef _KernelRows X = _KernelRows.__new__(_KernelRows)
    cdef _RowSet base
    if indptr.shape[0] < 1 or indices.shape[0] != data.shape[0]:
        raise ValueError("indptr must have one entry more than there are rows, and indices as many as data.")
    base = X._describe(&data[0] if data.shape[0] else NULL, indptr.shape[0] - 1, n_cols, rows)
    if index_t is int:
        X.r.kind = _CSR32
        X.r.csr32.base = base
        X.r.csr32.indices = &indices[0] if indices.shape[0] else NULL
        X.r.csr32.indptr = &indptr[0]
        X.r.csr32.nnz = data.shape[0]
    else:
        X.r.kind = _CSR64
        X.r.csr64.base = base
        X.r.csr64.indices = &indices[0] if indices.shape[0] else NULL
        X.r.csr64.indptr = &indptr[0]
        X.r.csr64.nnz = data.shape[0]
    X._arrays = (data, indices, indptr, rows)
    return X


def _dense_rows(const double[:, ::1] X, rows=None):
    # The rows of the C-contiguous X listed by rows (None: all, in order), read in place.
    cdef _KernelRows R = _KernelRows.__new__(_KernelRows)
    R.r.kind = _DENSE
    R.r.dense.base = R._describe(&X[0, 0] if X.shape[0] and X.shape[1] else NULL, X.shape[0], X.shape[1], rows)
    R._arrays = (X, rows)
    return R


cdef Py_ssize_t _check_rows(const Py_ssize_t[::1] rows, Py_ssize_t n_rows) except -1:
    # Refuse row indices outside X (of n_rows rows) before a kernel uses them; one past the largest.
    cdef Py_ssize_t i, low = 0, high = -1
    if rows.shape[0]:
        low = high = rows[0]
    with nogil:
        for i in range(rows.shape[0]):
            low = min(low, rows[i])
            high = max(high, rows[i])
    if low < 0 or high >= n_rows:
        raise ValueError(f"rows must lie in [0, {n_rows}); got indices from {low} to {high}.")
    return high + 1


cdef void _raise_index_error(Py_ssize_t index, Py_ssize_t size) noexcept:
    # Called with the GIL: the IndexError cannot leave this function, so Cython writes it as unraisable
    # (sys.unraisablehook) in the thread state that raised it.
    raise IndexError(f"index {index} is out of bounds for size {size} in a compiled kernel")


cdef void _index_error(Py_ssize_t index, Py_ssize_t size) noexcept nogil:
    # The checked build's report of an index out of bounds, as Cython reports a checked memoryview index in a
    # function that cannot raise. (Raised in this function, an OpenMP worker thread's report lost its
    # exception when the GIL was released, before Cython wrote it.)
    with gil:
        _raise_index_error(index, size)


cdef inline bint _outside(Py_ssize_t index, Py_ssize_t size) noexcept nogil:
    # Checked build: whether index lies outside [0, size) (reported if so). Release build: False, compiled away.
    if SKSSL_CHECKED_KERNELS and (index < 0 or index >= size):
        _index_error(index, size)
        return True
    return False


cdef inline Py_ssize_t _stored(const _RowSet* X, Py_ssize_t i) noexcept nogil:
    # The row of the stored matrix that is row i of X (-1 when the checked build finds it outside X).
    cdef Py_ssize_t r = X.rows[i] if X.rows != NULL else i
    return -1 if _outside(r, X.n_stored) else r


cdef inline bint _row_found(Py_ssize_t r) noexcept nogil:
    # False only in the checked build, for a row _stored found outside X.
    return not (SKSSL_CHECKED_KERNELS and r < 0)


cdef inline bint _csr_bounds(const rows_t* X, Py_ssize_t r, Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    # lo, hi = the bounds of CSR row r's stored values (False when the checked build finds them outside X).
    if rows_t is _Dense:
        return False
    else:
        if not _row_found(r):
            return False
        lo[0] = X.indptr[r]
        hi[0] = X.indptr[r + 1]
        return not (_outside(lo[0], hi[0] + 1) or _outside(hi[0], X.nnz + 1))


cdef inline double _row_dot(const rows_t* X, Py_ssize_t r, const double* v) noexcept nogil:
    # x . v for the stored row r (from _stored)
    cdef Py_ssize_t k, lo, hi
    cdef double s = 0.0
    if rows_t is _Dense:
        return _dense_dot(X.base.data + r * X.base.n_cols, v, X.base.n_cols) if _row_found(r) else 0.0
    else:
        if not _csr_bounds(X, r, &lo, &hi):
            return 0.0
        for k in range(lo, hi):
            if _outside(X.indices[k], X.base.n_cols):
                break
            s = s + X.base.data[k] * v[X.indices[k]]
        return s


cdef inline void _row_axpy(const rows_t* X, Py_ssize_t r, double a, double* out) noexcept nogil:
    # out += a x for the stored row r (from _stored)
    cdef Py_ssize_t k, lo, hi
    if rows_t is _Dense:
        if _row_found(r):
            _dense_axpy(a, X.base.data + r * X.base.n_cols, out, X.base.n_cols)
    elif _csr_bounds(X, r, &lo, &hi):
        for k in range(lo, hi):
            if _outside(X.indices[k], X.base.n_cols):
                break
            out[X.indices[k]] += a * X.base.data[k]


cdef inline const double* _ptr(const double[::1] a) noexcept nogil:
    return &a[0] if a.shape[0] else NULL


cdef inline double* _wptr(double[::1] a) noexcept nogil:
    return &a[0] if a.shape[0] else NULL


cdef void _matvec_rows(const rows_t* X, Py_ssize_t start, Py_ssize_t stop, const double* v, double b,
                       double* out) noexcept nogil:
    # out[r] = x_r . v + b for the rows start:stop of X, r being each one's row of the stored matrix.
    cdef Py_ssize_t i, r
    for i in range(start, stop):
        r = _stored(&X.base, i)
        if _row_found(r):
            out[r] = _row_dot(X, r, v) + b


# ---------------------------------------------------------------------------
# How many threads run the blocks: the fit's ThreadSchedule.
# ---------------------------------------------------------------------------

cdef enum:
    _ADAPTIVE = 0
    _FIXED = 1
    _ALTERNATE = 2

_MODES = {"adaptive": _ADAPTIVE, "fixed": _FIXED, "alternate": _ALTERNATE}

# The schedule of the fit running in this thread (set by ``with schedule:``); None outside a fit.
_active_schedule = ContextVar("skssl_thread_schedule", default=None)


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + 1e-9 * <double>ts.tv_nsec


cdef class ThreadSchedule:
    """How many OpenMP threads run a fit's row blocks: all of them or one, chosen by timing.

    Used as a context manager around a fit (``with ThreadSchedule(n):``); the
    kernels called inside it run their blocks on ``min(their blocks,
    threads)`` threads. ``threads`` never changes a result: the blocks and
    the order of their sums are the same on any number of threads.

    In ``"adaptive"`` mode (the default) a *probe* of ``probe_pairs`` pairs
    of CGLS iterations, each pair one iteration on one thread and the next
    on all, compares the summed times of the two sides; the faster side is
    then used until its iterations have taken ``probe_spacing`` times the
    probe's cost (the loser's excess time, at least the winner's time), and
    the next probe follows. A fit starts on all threads with a probe at its
    first CGLS iterations. ``"fixed"`` always uses ``max_threads`` (for
    benchmarks); ``"alternate"``
    switches between one thread and all at every iteration and kernel call
    (for tests of determinism).

    Parameters
    ----------
    max_threads : int
        The fit's threads (its ``n_jobs`` share).
    mode : {"adaptive", "fixed", "alternate"}, default="adaptive"
        How ``threads`` is chosen.
    probe_pairs : int, default=3
        Pairs of iterations per probe.
    probe_spacing : float, default=50.0
        Time on the chosen count between probes, in units of a probe's cost.
    one_thread_margin : float, default=0.8
        One thread wins a probe only when its summed time is at most this
        fraction of all threads' time (short iterations time noisily).

    Attributes
    ----------
    threads : int
        The threads the kernels use now: 1 or ``max_threads``.
    n_probes : int
        Probes completed.
    n_switches : int
        Probes that changed ``threads``.
    iterations_one, iterations_many : int
        CGLS iterations run on one thread and on more than one.
    probe_one, probe_many : float
        Seconds of the last completed probe's iterations on one thread and
        on all.
    """

    cdef readonly int max_threads
    cdef readonly int threads
    cdef readonly int probe_pairs
    cdef readonly double probe_spacing
    cdef readonly double one_thread_margin
    cdef readonly Py_ssize_t n_probes, n_switches, iterations_one, iterations_many
    cdef readonly double probe_one, probe_many
    cdef int _mode
    cdef int _pairs
    cdef int _flip
    cdef double _wait, _sum_one, _sum_many
    cdef object _token

    def __init__(
        self,
        int max_threads,
        *,
        mode="adaptive",
        int probe_pairs=3,
        double probe_spacing=50.0,
        double one_thread_margin=0.8,
    ):
        if max_threads < 1:
            raise ValueError(f"max_threads must be at least 1, got {max_threads}.")
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {sorted(_MODES)}, got {mode!r}.")
        if probe_pairs < 1:
            raise ValueError(f"probe_pairs must be at least 1, got {probe_pairs}.")
        if not probe_spacing >= 0.0:
            raise ValueError(f"probe_spacing must be a non-negative number, got {probe_spacing}.")
        if not 0.0 < one_thread_margin <= 1.0:
            raise ValueError(f"one_thread_margin must lie in (0, 1], got {one_thread_margin}.")
        self.max_threads = max_threads
        self.threads = max_threads
        self.probe_pairs = probe_pairs
        self.probe_spacing = probe_spacing
        self.one_thread_margin = one_thread_margin
        self._mode = _MODES[mode]
        self._wait = 0.0  # the first CGLS iterations probe
        self._token = None

    @property
    def mode(self):
        """{"adaptive", "fixed", "alternate"}: how ``threads`` is chosen."""
        return {v: k for k, v in _MODES.items()}[self._mode]

    def __enter__(self):
        self._token = _active_schedule.set(self)
        return self

    def __exit__(self, *exc):
        _active_schedule.reset(self._token)
        self._token = None
        return False

    def record_pair(self, double t_one, double t_many):
        """Add one probe pair: an iteration's seconds on one thread and on all (what CGLS reports).

        Parameters
        ----------
        t_one, t_many : float
            Seconds of the two iterations of the pair.
        """
        self._record_pair(t_one, t_many)

    @property
    def probe_due(self):
        """bool: whether the next CGLS iterations probe."""
        return self._mode == _ADAPTIVE and self._wait <= 0.0

    cdef void _record_pair(self, double t_one, double t_many) noexcept nogil:
        cdef double win, lose
        cdef int before = self.threads
        self._sum_one += t_one
        self._sum_many += t_many
        self._pairs += 1
        if self._pairs < self.probe_pairs:
            return
        # One thread wins only when clearly faster (see one_thread_margin); otherwise all threads.
        if self._sum_one <= self.one_thread_margin * self._sum_many:
            self.threads, win, lose = 1, self._sum_one, self._sum_many
        else:
            self.threads, win, lose = self.max_threads, self._sum_many, self._sum_one
        self._wait = self.probe_spacing * max(lose - win, win)
        self.probe_one = self._sum_one
        self.probe_many = self._sum_many
        self.n_probes += 1
        self.n_switches += self.threads != before
        self._pairs = 0
        self._sum_one = 0.0
        self._sum_many = 0.0

    cdef int _call_threads(self, int n) noexcept nogil:
        # Threads for a kernel call of n blocks outside CGLS's iterations.
        if self._mode == _ALTERNATE:
            self._flip = 1 - self._flip
            return 1 if self._flip else n
        return min(n, self.threads)


cdef ThreadSchedule _schedule():
    return _active_schedule.get()


def active_schedule():
    """The :class:`ThreadSchedule` of the fit running in this thread, or None."""
    return _active_schedule.get()


def _threads_for(int n_threads):
    # The threads a kernel call of n_threads blocks uses under the active schedule.
    cdef ThreadSchedule s = _schedule()
    if s is None or n_threads < 2:
        return n_threads
    return s._call_threads(n_threads)


def csr_matvec_blocks(data, indices, indptr, bounds, v, out, n_threads):
    """``out = X @ v`` over row blocks in parallel (each row summed as scipy sums it).

    ``X`` is the CSR matrix ``(data, indices, indptr)``; block ``k`` is rows
    ``bounds[k]:bounds[k + 1]``. ``n_threads`` is the most threads; the fit's
    :class:`ThreadSchedule` may use one.
    """
    _matvec(_csr_rows(data, indices, indptr, len(v)), bounds, v, 0.0, out, n_threads)


def csr_matvec_subset(data, indices, indptr, rows, v, b, out, n_threads):
    """``out[r] = x_r . v + b`` for the rows ``r`` listed, on ``n_threads`` OpenMP threads.

    ``X`` is the CSR matrix ``(data, indices, indptr)``. The rows are read
    where they are (no slice of X); each sum is summed as scipy's CSR mat-vec
    sums it. ``n_threads`` is the most threads; the fit's
    :class:`ThreadSchedule` may use one.
    """
    X = _csr_rows(data, indices, indptr, len(v), rows)
    _matvec(X, _even_bounds(len(rows), n_threads), v, b, out, n_threads)


def dense_matvec_subset(X, rows, v, b, out, n_threads):
    """:func:`csr_matvec_subset` on the C-contiguous dense ``X``: ``out[r] = X[r] . v + b`` for the rows ``r`` listed.

    Each sum is :func:`dense_cgls`'s row product.
    """
    _matvec(_dense_rows(X, rows), _even_bounds(len(rows), n_threads), v, b, out, n_threads)


cdef Py_ssize_t[::1] _even_bounds(Py_ssize_t n_rows, Py_ssize_t n_blocks):
    # The bounds of n_blocks row blocks of n_rows rows (a listed row's output does not depend on its block).
    cdef Py_ssize_t k
    n_blocks = max(1, min(n_blocks, n_rows))
    cdef Py_ssize_t[::1] bounds = np.empty(n_blocks + 1, dtype=np.intp)
    for k in range(n_blocks + 1):
        bounds[k] = n_rows * k // n_blocks
    return bounds


cdef int _check_blocks(const Py_ssize_t[::1] bounds, Py_ssize_t n_rows) except -1:
    # Refuse row blocks that do not run from row 0 to n_rows in order, before a kernel uses them.
    cdef Py_ssize_t k
    if bounds.shape[0] < 1 or bounds[0] != 0 or bounds[bounds.shape[0] - 1] != n_rows:
        raise ValueError(f"bounds must run from 0 to the {n_rows} rows.")
    for k in range(1, bounds.shape[0]):
        if bounds[k] < bounds[k - 1]:
            raise ValueError("bounds must never decrease.")
    return 0


def _matvec(_KernelRows X, const Py_ssize_t[::1] bounds, const double[::1] v, double b, double[::1] out,
            int n_threads):
    # out[r] = x_r . v + b for the rows r of X (those it lists, or all), on the row blocks bounds.
    cdef Py_ssize_t blk, n_blocks = bounds.shape[0] - 1
    cdef const _Rows* R = &X.r
    cdef const double* vp = _ptr(v)
    cdef double* op = _wptr(out)
    if X.n_cols != v.shape[0]:
        raise ValueError(f"X has {X.n_cols} columns but v has {v.shape[0]} entries.")
    _check_blocks(bounds, X.n_rows)
    if out.shape[0] < X.n_reach:
        raise ValueError(f"rows must lie in [0, {out.shape[0]}) (the entries of out); got row {X.n_reach - 1}.")
    n_threads = _threads_for(n_threads)
    with nogil:
        for blk in prange(n_blocks, num_threads=n_threads, schedule="static", chunksize=1):
            if R.kind == _DENSE:
                _matvec_rows(&R.dense, bounds[blk], bounds[blk + 1], vp, b, op)
            elif R.kind == _CSR64:
                _matvec_rows(&R.csr64, bounds[blk], bounds[blk + 1], vp, b, op)
            else:
                _matvec_rows(&R.csr32, bounds[blk], bounds[blk + 1], vp, b, op)


# ---------------------------------------------------------------------------
# The whole CGLS loop in one GIL-free call.
#
# Each iteration is three parallel loops over the blocks (the fused product;
# the weight and row updates; the new direction), with the scalar steps of
# CGLS between them in the calling thread. Block k owns rows
# bounds[k]:bounds[k + 1] and features fbounds[k]:fbounds[k + 1]; every
# partial sum goes into its own slot of `parts` and the slots are added in
# block order, so the result does not depend on the threads' timing.
# ---------------------------------------------------------------------------

cdef enum:
    _RR = 0   # |xtz - alpha w|^2 over the block's features
    _ZS = 1   # sum z over the block's rows
    _ZZ = 2   # |z|^2 over the block's rows
    _PP = 3   # |p|^2 over the block's features
    _CQ = 4   # sum cost q over the block's rows
    _QCQ = 5  # q' C q over the block's rows
    _N_PARTS = 8  # one 64-byte line per block


cdef struct _CG:
    # One CGLS call's rows and vectors, shared by its blocks. Block k owns rows bounds[k]:bounds[k + 1] and
    # features fbounds[k]:fbounds[k + 1], writes its X_k^T (...) into outs[k * n_out:(k + 1) * n_out] and its
    # partial sums into parts[k * _N_PARTS:(k + 1) * _N_PARTS].
    const _Rows* X
    const Py_ssize_t* bounds
    const Py_ssize_t* fbounds
    const double* cost
    const double* target
    double* outputs
    double* z
    double* q
    double* p
    double* xtz
    double* w
    double* outs
    double* parts
    Py_ssize_t n_blocks
    Py_ssize_t n_out


cdef void _start_rows(const rows_t* X, const _CG* s, Py_ssize_t k) noexcept nogil:
    # z = C (target - outputs) on the block's rows, outs_k = X_k^T z_k, and the sums of z.
    cdef Py_ssize_t i, j
    cdef double zi, zs = 0.0, zz = 0.0
    cdef double* out = s.outs + k * s.n_out
    cdef double* part = s.parts + k * _N_PARTS
    for j in range(s.n_out):
        out[j] = 0.0
    for i in range(s.bounds[k], s.bounds[k + 1]):
        zi = s.cost[i] * (s.target[i] - s.outputs[i])
        s.z[i] = zi
        zs += zi
        zz += zi * zi
        if zi != 0.0:
            _row_axpy(X, _stored(&X.base, i), zi, out)
    part[_ZS] = zs
    part[_ZZ] = zz


cdef void _gram_rows(const rows_t* X, const _CG* s, Py_ssize_t k, double pb, double p_norm) noexcept nogil:
    # CGLS's two products over the block's rows in one pass: q_i = (x_i . p + pb) / p_norm (for CSR rows
    # bitwise (X @ p + pb) / p_norm), outs_k += cost_i q_i x_i (rows of zero cost skipped; outs_k is zero on
    # entry), and the sums (sum cost q, sum cost q^2).
    cdef Py_ssize_t i, r
    cdef double v, cq, cq_sum = 0.0, qcq = 0.0
    cdef double* out = s.outs + k * s.n_out
    for i in range(s.bounds[k], s.bounds[k + 1]):
        r = _stored(&X.base, i)
        v = (_row_dot(X, r, s.p) + pb) / p_norm
        s.q[i] = v
        cq = s.cost[i] * v
        cq_sum += cq
        qcq += cq * v
        if cq != 0.0:
            _row_axpy(X, r, cq, out)
    s.parts[k * _N_PARTS + _CQ] = cq_sum
    s.parts[k * _N_PARTS + _QCQ] = qcq


cdef enum:
    _START = 0  # _start_rows
    _GRAM = 1   # _gram_rows


cdef void _row_pass(const rows_t* X, const _CG* s, Py_ssize_t k, int which, double pb, double p_norm) noexcept nogil:
    if which == _START:
        _start_rows(X, s, k)
    else:
        _gram_rows(X, s, k, pb, p_norm)


cdef void _block_rows(const _CG* s, Py_ssize_t k, int which, double pb=0.0, double p_norm=1.0) noexcept nogil:
    # Block k's pass over its rows (which: _START or _GRAM) on the kind of rows s.X holds: the kind is tested
    # once per block and pass, never per row.
    if s.X.kind == _DENSE:
        _row_pass(&s.X.dense, s, k, which, pb, p_norm)
    elif s.X.kind == _CSR64:
        _row_pass(&s.X.csr64, s, k, which, pb, p_norm)
    else:
        _row_pass(&s.X.csr32, s, k, which, pb, p_norm)


cdef inline double _take_block_sum(const _CG* s, Py_ssize_t j) noexcept nogil:
    # outs_0[j] + outs_1[j] + ... in block order, leaving zeros for the next product to add to (zeroing
    # the lines just read costs less than a separate pass over them).
    cdef Py_ssize_t k
    cdef double v = s.outs[j]
    s.outs[j] = 0.0
    for k in range(1, s.n_blocks):
        v = v + s.outs[k * s.n_out + j]
        s.outs[k * s.n_out + j] = 0.0
    return v


cdef void _start_features(const _CG* s, Py_ssize_t k, double alpha) noexcept nogil:
    # xtz = X^T z (the blocks' sum), p = xtz - alpha w, |p|^2.
    cdef Py_ssize_t j
    cdef double r, rr = 0.0
    for j in range(s.fbounds[k], s.fbounds[k + 1]):
        s.xtz[j] = _take_block_sum(s, j)
        r = s.xtz[j] - alpha * s.w[j]
        s.p[j] = r
        rr += r * r
    s.parts[k * _N_PARTS + _RR] = rr


cdef void _step(const _CG* s, Py_ssize_t k, double step_w, double t, double alpha) noexcept nogil:
    # Features: w += step_w p, xtz -= t X^T C q, |xtz - alpha w|^2. Rows: outputs += t q, z -= t C q, and the
    # sums of z.
    cdef Py_ssize_t i, j
    cdef double r, v, rr = 0.0, zs = 0.0, zz = 0.0
    cdef double* part = s.parts + k * _N_PARTS
    for j in range(s.fbounds[k], s.fbounds[k + 1]):
        s.w[j] += step_w * s.p[j]
        s.xtz[j] -= t * _take_block_sum(s, j)
        r = s.xtz[j] - alpha * s.w[j]
        rr += r * r
    part[_RR] = rr
    for i in range(s.bounds[k], s.bounds[k + 1]):
        s.outputs[i] += t * s.q[i]
        v = s.z[i] - t * (s.cost[i] * s.q[i])
        s.z[i] = v
        zs += v
        zz += v * v
    part[_ZS] = zs
    part[_ZZ] = zz


cdef void _direction(const _CG* s, Py_ssize_t k, double scale, double alpha) noexcept nogil:
    # p = scale p + (xtz - alpha w), |p|^2.
    cdef Py_ssize_t j
    cdef double v, pp = 0.0
    for j in range(s.fbounds[k], s.fbounds[k + 1]):
        v = scale * s.p[j] + (s.xtz[j] - alpha * s.w[j])
        s.p[j] = v
        pp += v * v
    s.parts[k * _N_PARTS + _PP] = pp


cdef inline double _parts_sum(const double* parts, Py_ssize_t n_blocks, int col) noexcept nogil:
    # The blocks' partial sums of column col of parts (n_blocks rows of _N_PARTS), added in block order.
    cdef Py_ssize_t k
    cdef double v = parts[col]
    for k in range(1, n_blocks):
        v = v + parts[k * _N_PARTS + col]
    return v


def csr_cgls(data, indices, indptr, bounds, cost, target, outputs, w, b, alpha, alpha_b, eps, max_iter, n_threads):
    """CGLS on the CSR rows ``(data, indices, indptr)``, seeded at ``(w, b)``, all iterations in one GIL-free call.

    Solves ``(D + X^T C X) [w; b] = X^T C target`` with
    ``D = diag(alpha, ..., alpha, alpha_b)`` (``X`` with a column of ones
    appended for the bias, never built; ``alpha_b`` is the bias's
    regularization, ``alpha`` in SVMlin), stopping when
    ``|r|^2 <= eps^2 |z|^2`` with ``z = C (target - o)`` and
    ``r = X^T z - D [w; b]`` (SVMlin's relative rule) or after
    ``max_iter`` iterations; each step is taken along the unit direction (see
    :func:`skssl.svm.solvers._mfn.cgls`). The row blocks ``bounds`` and as many
    feature ranges each put their share of every product and update on one of
    at most ``n_threads`` OpenMP threads. Inside a fit's
    :class:`ThreadSchedule` each iteration runs on the threads the schedule
    chooses (and its probes time the iterations); the result is the same on
    any number of threads. ``cost``, ``target`` and ``outputs`` have one entry
    per row; ``w`` and ``outputs`` are updated in place.

    Returns
    -------
    b : float
    converged : bool
    n_iter : int
    """
    return _cgls(_csr_rows(data, indices, indptr, len(w)), bounds, cost, target, outputs, w, b, alpha, alpha_b, eps,
                 max_iter, n_threads)


def dense_cgls(X, rows, bounds, cost, target, outputs, w, b, alpha, alpha_b, eps, max_iter, n_threads):
    """:func:`csr_cgls` on the dense rows ``X[rows]`` (C-contiguous ``X``), read in place.

    Row ``i`` of the system is ``X[rows[i]]``; ``cost``, ``target`` and
    ``outputs`` are indexed by ``i``. No slice of ``X`` is made; each
    iteration reads every row once for both products (BLAS's ``ddot`` and
    ``daxpy`` on the row, see :func:`dense_blas`).

    Returns
    -------
    b : float
    converged : bool
    n_iter : int
    """
    return _cgls(_dense_rows(X, rows), bounds, cost, target, outputs, w, b, alpha, alpha_b, eps, max_iter, n_threads)


def _cgls(
    _KernelRows rows,
    const Py_ssize_t[::1] bounds,
    const double[::1] cost,
    const double[::1] target,
    double[::1] outputs,
    double[::1] w,
    double b,
    double alpha,
    double alpha_b,
    double eps,
    Py_ssize_t max_iter,
    int n_threads,
):
    # The CGLS loop of csr_cgls and dense_cgls on the given rows, after the checks of its arguments.
    if not (alpha > 0.0 and alpha_b > 0.0 and isfinite(alpha) and isfinite(alpha_b)):
        raise ValueError(f"alpha and alpha_b must be positive and finite, got {alpha!r} and {alpha_b!r}.")
    if rows.n_cols != w.shape[0]:
        raise ValueError(f"X has {rows.n_cols} columns but w has {w.shape[0]} entries.")
    if rows.n_rows != outputs.shape[0] or cost.shape[0] != rows.n_rows or target.shape[0] != rows.n_rows:
        raise ValueError("rows, outputs, cost and target disagree on the number of rows.")
    _check_blocks(bounds, rows.n_rows)
    cdef Py_ssize_t n_blocks = bounds.shape[0] - 1
    cdef Py_ssize_t n_rows = outputs.shape[0], n_features = w.shape[0]
    cdef Py_ssize_t blk, it, n_iter = 0
    cdef double[::1] z = np.empty(n_rows)
    cdef double[::1] q = np.empty(n_rows)
    cdef double[::1] p = np.empty(n_features)
    cdef double[::1] xtz = np.empty(n_features)
    cdef double[:, ::1] outs = np.empty((n_blocks, max(n_features, 1)))
    cdef double[:, ::1] parts = np.zeros((n_blocks, _N_PARTS))
    cdef Py_ssize_t[::1] fbounds = np.linspace(0, n_features, n_blocks + 1).astype(np.intp)
    cdef _CG s
    s.X = &rows.r
    s.bounds = &bounds[0]
    s.fbounds = &fbounds[0]
    s.cost = _ptr(cost)
    s.target = _ptr(target)
    s.outputs = _wptr(outputs)
    s.z = _wptr(z)
    s.q = _wptr(q)
    s.p = _wptr(p)
    s.xtz = _wptr(xtz)
    s.w = _wptr(w)
    s.outs = &outs[0, 0]
    s.parts = &parts[0, 0]
    s.n_blocks = n_blocks
    s.n_out = outs.shape[1]
    cdef double eps2 = eps * eps, rb, pb, omega1, omega_p, omega_new, p_norm, t, scale, zz
    cdef bint converged = False
    # The threads of each iteration: the schedule's choice, or one and all in turn while it probes.
    cdef ThreadSchedule sched = _schedule()
    cdef int n_max = <int>min(n_threads, n_blocks), nt = n_max
    cdef bint timed = sched is not None and n_max > 1
    cdef bint probing = False, half = False
    cdef double t0 = 0.0, dt, t_one = 0.0
    if timed:
        nt = sched._call_threads(n_max)
    with nogil:
        for blk in prange(n_blocks, num_threads=nt, schedule="static", chunksize=1):
            _block_rows(&s, blk, _START)
        for blk in prange(n_blocks, num_threads=nt, schedule="static", chunksize=1):
            _start_features(&s, blk, alpha)
        rb = _parts_sum(s.parts, n_blocks, _ZS) - alpha_b * b
        omega1 = _parts_sum(s.parts, n_blocks, _RR) + rb * rb
        if omega1 <= eps2 * _parts_sum(s.parts, n_blocks, _ZZ):
            converged = True
        pb = rb
        omega_p = omega1
        it = 0
        while not converged and it < max_iter:
            it = it + 1
            if timed:
                # A probe pair is one iteration on one thread, then one on all; a pair cut by the end of
                # the call is dropped (the next call's iterations may cost something else).
                probing = sched._mode == _ADAPTIVE and sched._wait <= 0.0
                if probing:
                    nt = n_max if half else 1
                else:
                    nt = sched._call_threads(n_max)
                if nt > 1:
                    sched.iterations_many += 1
                else:
                    sched.iterations_one += 1
                t0 = _now()
            p_norm = sqrt(omega_p)
            for blk in prange(n_blocks, num_threads=nt, schedule="static", chunksize=1):
                _block_rows(&s, blk, _GRAM, pb, p_norm)
            # p' D p / |p|^2 for the unit direction: alpha, with the bias's share at alpha_b.
            t = (omega1 / p_norm) / (alpha + (alpha_b - alpha) * (pb / p_norm) * (pb / p_norm)
                                     + _parts_sum(s.parts, n_blocks, _QCQ))
            for blk in prange(n_blocks, num_threads=nt, schedule="static", chunksize=1):
                _step(&s, blk, t / p_norm, t, alpha)
            b = b + (t / p_norm) * pb
            rb = _parts_sum(s.parts, n_blocks, _ZS) - alpha_b * b
            omega_new = _parts_sum(s.parts, n_blocks, _RR) + rb * rb
            zz = _parts_sum(s.parts, n_blocks, _ZZ)
            # <=: an exact solution (omega_new == 0) is converged; '<' would divide 0 by 0 next.
            if omega_new <= eps2 * zz:
                converged = True
                break
            scale = omega_new / omega1
            omega1 = omega_new
            pb = rb + scale * pb
            for blk in prange(n_blocks, num_threads=nt, schedule="static", chunksize=1):
                _direction(&s, blk, scale, alpha)
            omega_p = _parts_sum(s.parts, n_blocks, _PP) + pb * pb
            if timed:
                dt = _now() - t0
                if not probing:
                    sched._wait -= dt
                elif not half:
                    t_one = dt
                    half = True
                else:
                    sched._record_pair(t_one, dt)
                    half = False
        n_iter = it
    return b, bool(converged), n_iter


# ---------------------------------------------------------------------------
# The exact line search of l2-SVM-MFN without sorting the breakpoints.
# ---------------------------------------------------------------------------

cdef inline void _swap3(double* a, double* b, double* c, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    a[i], a[j] = a[j], a[i]
    b[i], b[j] = b[j], b[i]
    c[i], c[j] = c[j], c[i]


cdef inline double _median3(double a, double b, double c) noexcept nogil:
    if a < b:
        if b < c:
            return b
        return c if a < c else a
    if a < c:
        return a
    return c if b < c else b


cdef double _line_root(double L, double R) noexcept nogil:
    # Root of L + delta (R - L); R <= L only for a zero direction, where any step is a no-op.
    return -L / (R - L) if R > L else 0.0


def line_search_terms(
    const double[::1] o,
    const double[::1] o_bar,
    const double[::1] y,
    const double[::1] cost,
    double L,
    double R,
):
    """The step of :func:`skssl.svm.solvers._mfn.line_search` from the loss terms, by selection instead of a sort.

    ``L`` and ``R`` are the regularization's parts of the slope at 0 and 1.
    The breakpoints are partitioned around a pivot (median of three) as in
    quickselect; the slope at the pivot says on which side the root lies, and
    the contributions of the breakpoints passed on the left are added up on
    the way. Expected O(n) instead of the sort's O(n log n); the piece found
    is the sorted walk's, with its sums added in another order.
    """
    cdef Py_ssize_t i, n = o.shape[0], m = 0, lo, hi, a, b, k
    cdef double yo, do, cdo, slope, sign, pivot, sL, sR, Lp, Rp, v
    cdef double[::1] delta_mv = np.empty(n), dL_mv = np.empty(n), dR_mv = np.empty(n)
    cdef double* delta = &delta_mv[0] if n else NULL
    cdef double* dL = &dL_mv[0] if n else NULL
    cdef double* dR = &dR_mv[0] if n else NULL
    with nogil:
        for i in range(n):
            yo = y[i] * o[i]
            do = o_bar[i] - o[i]
            cdo = cost[i] * do
            slope = y[i] * do
            if yo < 1.0:
                L += (o[i] - y[i]) * cdo
                R += (o_bar[i] - y[i]) * cdo
                if not slope > 0.0:
                    continue
                sign = -1.0  # an active term that leaves
            elif slope < 0.0:
                sign = 1.0  # an inactive term that enters
            else:
                continue
            delta[m] = (1.0 - yo) / slope
            dL[m] = sign * cdo * (o[i] - y[i])
            dR[m] = sign * cdo * (o_bar[i] - y[i])
            m += 1
        # Invariant: the root's piece is decided by the breakpoints in [lo, hi); (L, R) holds the
        # contributions of every breakpoint below them. With none left, the piece is (L, R).
        lo = 0
        hi = m
        while lo < hi:
            pivot = _median3(delta[lo], delta[lo + (hi - lo) // 2], delta[hi - 1])
            # Three-way partition: [lo, a) < pivot, [a, b) == pivot, [b, hi) > pivot.
            a = lo
            b = lo
            k = hi
            while b < k:
                v = delta[b]
                if v < pivot:
                    _swap3(delta, dL, dR, a, b)
                    a += 1
                    b += 1
                elif v > pivot:
                    k -= 1
                    _swap3(delta, dL, dR, b, k)
                else:
                    b += 1
            sL = 0.0
            sR = 0.0
            for i in range(lo, a):
                sL += dL[i]
                sR += dR[i]
            Lp = L + sL
            Rp = R + sR
            if Lp + pivot * (Rp - Lp) >= 0.0:
                hi = a  # the slope turns non-negative at or before the pivot
            else:
                for i in range(a, b):
                    sL += dL[i]
                    sR += dR[i]
                L += sL
                R += sR
                lo = b
    return _line_root(L, R)


# ---------------------------------------------------------------------------
# The mean belief of deterministic annealing's p-step.
# ---------------------------------------------------------------------------

def belief_mean(double nu, const double[::1] g, double T, const double[::1] weight, int n_threads):
    """Mean of ``expit((nu - g) / T)``, weighted by ``weight`` unless it is empty, on ``n_threads`` threads.

    One pass and no temporaries (numpy's ``average(expit(...))`` makes three
    over the unlabeled rows); called a dozen times per p-step by brentq. The
    rows are split into ``n_threads`` contiguous blocks whose partial sums
    are added in block order: the same value for the same ``n_threads``,
    whether the fit's :class:`ThreadSchedule` runs the blocks on that many
    threads or on one.
    """
    cdef Py_ssize_t n = g.shape[0], blk, i, lo, hi
    cdef bint weighted = weight.shape[0] > 0
    if weighted and weight.shape[0] != g.shape[0]:
        raise ValueError(f"weight has {weight.shape[0]} entries for {g.shape[0]} gaps; give one per gap, or none.")
    cdef int n_blocks = max(1, min(n_threads, <int>(n // 4096)))
    cdef int n_run = _threads_for(n_blocks)
    cdef double[:, ::1] parts = np.zeros((n_blocks, _N_PARTS))
    cdef double s, sw, v, total, total_w
    with nogil:
        for blk in prange(n_blocks, num_threads=n_run, schedule="static", chunksize=1):
            lo = n * blk // n_blocks
            hi = n * (blk + 1) // n_blocks
            s = 0.0
            sw = 0.0
            for i in range(lo, hi):
                # expit; exp overflows to inf for rows far below nu, giving exactly 0 as expit does.
                v = 1.0 / (1.0 + exp((g[i] - nu) / T))
                if weighted:
                    s = s + weight[i] * v
                    sw = sw + weight[i]
                else:
                    s = s + v
            parts[blk, 0] = s
            parts[blk, 1] = sw
        total = _parts_sum(&parts[0, 0], n_blocks, 0)
        total_w = _parts_sum(&parts[0, 0], n_blocks, 1) if weighted else <double>n
    return total / total_w


def belief_sums(const double[::1] xs, const double[::1] g, double T, const double[::1] weight, int n_threads):
    """Sums of ``p = expit((x - g) / T)`` and of ``p (1 - p)`` for each threshold ``x`` of ``xs``: shape (K, 2).

    Weighted by ``weight`` unless it is empty. One pass over ``g`` for all
    thresholds (DA's threshold search evaluates a round of them at once, and
    the second column gives the mean's slope in ``nu``); the rows are split
    into ``n_threads`` contiguous blocks whose partial sums are added in block
    order, as :func:`belief_mean`'s.
    """
    cdef Py_ssize_t n = g.shape[0], K = xs.shape[0], blk, i, k, lo, hi
    cdef bint weighted = weight.shape[0] > 0
    if weighted and weight.shape[0] != g.shape[0]:
        raise ValueError(f"weight has {weight.shape[0]} entries for {g.shape[0]} gaps; give one per gap, or none.")
    cdef int n_blocks = max(1, min(n_threads, <int>(n // 4096)))
    cdef int n_run = _threads_for(n_blocks)
    cdef double[:, :, ::1] parts = np.zeros((n_blocks, max(K, 1), 2))
    cdef double[:, ::1] out = np.zeros((K, 2))
    cdef double v, wi
    with nogil:
        for blk in prange(n_blocks, num_threads=n_run, schedule="static", chunksize=1):
            lo = n * blk // n_blocks
            hi = n * (blk + 1) // n_blocks
            for i in range(lo, hi):
                wi = weight[i] if weighted else 1.0
                for k in range(K):
                    # exp overflows to inf for rows far below x, giving exactly 0 as expit does.
                    v = 1.0 / (1.0 + exp((g[i] - xs[k]) / T))
                    parts[blk, k, 0] += wi * v
                    parts[blk, k, 1] += wi * (v * (1.0 - v))
        for k in range(K):
            for blk in range(n_blocks):
                out[k, 0] = out[k, 0] + parts[blk, k, 0]
                out[k, 1] = out[k, 1] + parts[blk, k, 1]
    return np.asarray(out)
