"""NumPy's BLAS, for native kernels: its matrix product's address and its thread count.

Native kernels that multiply matrices (the convolutions) call the very `gemm` NumPy's
`matmul` calls, so a product rounds the same way on either path and ember ships no BLAS of
its own. The library is NumPy's bundled OpenBLAS (`numpy.libs`, or `numpy/.dylibs` on
macOS): its CBLAS `sgemm`/`dgemm`, with 64-bit integers (NumPy's ILP64 build, symbols
suffixed `64_`) or 32-bit ones. Where none is found (NumPy built against another BLAS)
`gemm()` is None and those kernels leave their work to NumPy.
"""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

# (sgemm, dgemm, 64-bit integers) symbol names, tried in order
_NAMES = (("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_", True),
          ("cblas_sgemm64_", "cblas_dgemm64_", True),
          ("scipy_cblas_sgemm", "scipy_cblas_dgemm", False),
          ("cblas_sgemm", "cblas_dgemm", False))
_found: dict = {}


def _libraries() -> list[str]:
    root = os.path.dirname(np.__file__)
    pats = (os.path.join(root, os.pardir, "numpy.libs", "lib*openblas*"),
            os.path.join(root, ".dylibs", "lib*openblas*"))
    return sorted(p for pat in pats for p in glob.glob(pat))


def openblas() -> ctypes.CDLL | None:
    """NumPy's bundled OpenBLAS (the loaded copy), or None."""
    if "lib" not in _found:
        _found["lib"] = None
        for path in _libraries():
            try:
                _found["lib"] = ctypes.CDLL(path)
                break
            except OSError:
                continue
    return _found["lib"]


def gemm() -> tuple[int, int, bool] | None:
    """(address of sgemm, address of dgemm, whether they take 64-bit integers), or None."""
    if "gemm" not in _found:
        _found["gemm"] = None
        lib = openblas()
        for s, d, ilp64 in _NAMES if lib is not None else ():
            try:
                fs, fd = getattr(lib, s), getattr(lib, d)
            except AttributeError:
                continue
            addr = ctypes.cast(fs, ctypes.c_void_p).value, ctypes.cast(fd, ctypes.c_void_p).value
            _found["gemm"] = (*addr, ilp64)
            break
    return _found["gemm"]


def thread_setter():
    """OpenBLAS's `openblas_set_num_threads_local` (sets the count, returns the previous
    one; process-wide in NumPy's pthreads build), or None."""
    lib = openblas()
    try:
        fn = lib.openblas_set_num_threads_local
    except AttributeError:
        return None
    fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
    return fn
