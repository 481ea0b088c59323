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

import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

openmp = ["-fopenmp"] if sys.platform.startswith("linux") else []

setup(
    ext_modules=cythonize(
        [
            Extension(
                "skssl.svm._csr_kernels",
                ["skssl/svm/_csr_kernels.pyx"],
                extra_compile_args=["-O3", "-funroll-loops", *openmp],
                extra_link_args=openmp,
            )
        ],
        compiler_directives={"language_level": 3},
    )
)
