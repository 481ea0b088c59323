"""Build of skssl's compiled modules; everything else is in pyproject.toml.

The kernels run their row blocks on OpenMP threads when the C compiler can
build OpenMP programs. Whether it can is not guessed from the platform (gcc
on Linux can, Apple's clang cannot, a gcc or clang with libomp on macOS can,
a Linux clang without libomp cannot): before compiling the extensions,
``build_ext`` compiles and links a small C program that calls
``omp_get_max_threads()``, with the compiler and flags setuptools is about
to use and the OpenMP flag (``-fopenmp``; ``/openmp`` for MSVC). Only if
that works are the kernels built with the flag; otherwise they are built
without, one line says so, and the row blocks run one after the other: the
same results, one core per one-vs-rest problem. The compiled module records
which build it is (``skssl.svm.kernels._kernels.OPENMP``, from the compiler's own
``_OPENMP`` macro), ``skssl.show_versions()`` prints it, and a fit asking
for more than one thread on a build without OpenMP warns once.

``-funroll-loops`` unrolls the row loops of the products without changing
the order of their sums (no ``-ffast-math``): the same results, and CGLS's
iteration on 20 Newsgroups took 1.12-1.18 ms instead of 1.23-1.27 ms on two
threads (three alternating runs, idle machine).
"""

import os
import sys
import tempfile

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError, LinkError

# The extensions whose loops run on OpenMP threads (cython.parallel.prange).
OPENMP_EXTENSIONS = {"skssl.svm._csr_kernels"}

OPENMP_PROBE = r"""
#include <omp.h>
#include <stdio.h>

int main(void) {
    int n_threads = 0;
    #pragma omp parallel reduction(+ : n_threads)
    n_threads += 1;
    printf("%d %d\n", omp_get_max_threads(), n_threads);
    return 0;
}
"""


def _quietly(call):
    """Run ``call()`` with the process's stdout and stderr sent to a temporary file; return its result.

    A compiler that cannot build OpenMP programs prints its errors; the probe replaces them by one line.
    """
    with tempfile.TemporaryFile() as sink:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            return call()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _openmp_flag(compiler):
    return "/openmp" if compiler.compiler_type == "msvc" else "-fopenmp"


def openmp_flags(compiler):
    """The OpenMP flags to compile and link with, or ``[]`` when ``compiler`` cannot build an OpenMP program.

    Parameters
    ----------
    compiler : distutils.ccompiler.CCompiler
        The compiler that will build the extensions, already customized (``CC``, ``CFLAGS``, ``LDFLAGS``).

    Returns
    -------
    flags : list of str
        ``["-fopenmp"]`` (``["/openmp"]`` for MSVC) if a program calling ``omp_get_max_threads()`` in a
        parallel region compiles and links with it, else ``[]``.
    """
    flags = [_openmp_flag(compiler)]
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "openmp_probe.c")
        with open(source, "w") as f:
            f.write(OPENMP_PROBE)

        def build():
            objects = compiler.compile([source], output_dir=tmp, extra_postargs=flags)
            compiler.link_executable(objects, "openmp_probe", output_dir=tmp, extra_postargs=flags)

        try:
            _quietly(build)
        except (CompileError, LinkError):
            return []
    return flags


class BuildExt(build_ext):
    """``build_ext`` that adds the OpenMP flags to :data:`OPENMP_EXTENSIONS` when the compiler supports them."""

    def build_extensions(self):
        flags = openmp_flags(self.compiler)
        flag = _openmp_flag(self.compiler)
        if flags:
            print(f"skssl: OpenMP probe: the C compiler builds OpenMP programs with {flag}; kernels use OpenMP")
        else:
            print(
                f"skssl: OpenMP probe: the C compiler cannot build an OpenMP program with {flag}; building the "
                "kernels WITHOUT OpenMP (n_jobs > 1 will not run their row blocks in parallel)"
            )
        for ext in self.extensions:
            if ext.name in OPENMP_EXTENSIONS:
                ext.extra_compile_args = [*ext.extra_compile_args, *flags]
                ext.extra_link_args = [*ext.extra_link_args, *flags]
        super().build_extensions()


# The kernels index typed memoryviews and the caller's arrays without bounds checks. SKSSL_CHECKED_KERNELS=1
# builds them with every index checked (an IndexError instead of a read or write out of bounds: Cython's checks
# of memoryview indices, and the kernels' own checks of the indices they follow from CSR and row arrays, on
# under the macro of that name) and address sanitizer instrumentation, for the test run in .ci/run that looks
# for memory errors; never for a release.
checked = os.environ.get("SKSSL_CHECKED_KERNELS") == "1"
directives = {
    "language_level": 3,
    "boundscheck": checked,
    "wraparound": checked,
    "initializedcheck": checked,
    "cdivision": True,
}
sanitize = ["-fsanitize=address", "-fno-omit-frame-pointer"] if checked else []
checked_macro = [("SKSSL_CHECKED_KERNELS", "1")] if checked else []

setup(
    ext_modules=cythonize(
        [
            Extension(
                "skssl.svm._csr_kernels",
                ["skssl/svm/_csr_kernels.pyx"],
                define_macros=checked_macro,
                extra_compile_args=["-O3", "-funroll-loops", *sanitize],
                extra_link_args=sanitize,
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
    ),
    cmdclass={"build_ext": BuildExt},
)
