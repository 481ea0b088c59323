"""Build of skssl's one compiled module; everything else is in pyproject.toml.

The kernel runs its row blocks on OpenMP threads where the compiler supports
OpenMP (gcc on Linux; ``-fopenmp``). Elsewhere (Apple's clang has no OpenMP)
it is compiled without, and the blocks run one after the other: the same
results, one core.
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
                extra_compile_args=["-O3", *openmp],
                extra_link_args=openmp,
            )
        ],
        compiler_directives={"language_level": 3},
    )
)
