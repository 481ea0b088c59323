"""Build of skssl's one compiled module; everything else is in pyproject.toml.

The kernel runs its row blocks on OpenMP threads where the compiler supports
OpenMP (gcc on Linux; ``-fopenmp``). Elsewhere (Apple's clang has no OpenMP)
it is compiled without, and the blocks run one after the other: the same
results, one core.

``-funroll-loops`` unrolls the row loops of the products without changing
the order of their sums (no ``-ffast-math``): the same results, and CGLS's
iteration on 20 Newsgroups took 1.12-1.18 ms instead of 1.23-1.27 ms on two
threads (three alternating runs, idle machine).
"""

import os
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

openmp = ["-fopenmp"] if sys.platform.startswith("linux") else []

# The kernels index typed memoryviews without bounds checks. SKSSL_CHECKED_KERNELS=1 builds them with every
# index checked (an IndexError instead of a read or write out of bounds) and address sanitizer instrumentation,
# for the test run in .ci/run that looks for memory errors; never for a release.
checked = os.environ.get("SKSSL_CHECKED_KERNELS") == "1"
directives = {
    "language_level": 3,
    "boundscheck": checked,
    "wraparound": checked,
    "initializedcheck": checked,
    "cdivision": True,
}
sanitize = ["-fsanitize=address", "-fno-omit-frame-pointer"] if checked else []

setup(
    ext_modules=cythonize(
        [
            Extension(
                "skssl.svm._csr_kernels",
                ["skssl/svm/_csr_kernels.pyx"],
                extra_compile_args=["-O3", "-funroll-loops", *openmp, *sanitize],
                extra_link_args=[*openmp, *sanitize],
            ),
            Extension(
                "skssl.utils._sparse_structure",
                ["skssl/utils/_sparse_structure.pyx"],
                extra_compile_args=["-O3", *sanitize],
                extra_link_args=sanitize,
            ),
        ],
        compiler_directives=directives,
        # The checked build keeps its generated C apart, so switching builds always regenerates it.
        build_dir="build/checked" if checked else None,
    )
)
