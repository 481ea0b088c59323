"""Build of skssl's one compiled module; everything else is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("skssl.svm._csr_kernels", ["skssl/svm/_csr_kernels.pyx"], extra_compile_args=["-O3"])],
        compiler_directives={"language_level": 3},
    )
)
