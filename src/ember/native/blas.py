"""NumPy's BLAS, for native kernels: its matrix product's address, its thread count, and
its threads handed to ember's pool.

Native kernels that multiply matrices (the convolutions) call the very `gemm` NumPy's
`matmul` calls, so a product rounds the same way on either path and ember ships no BLAS of
its own. The library is NumPy's bundled OpenBLAS (`numpy.libs`, or `numpy/.dylibs` on
macOS): its CBLAS `sgemm`/`dgemm`, with 64-bit integers (NumPy's ILP64 build, symbols
suffixed `64_`) or 32-bit ones. Where none is found (NumPy built against another BLAS)
`gemm()` is None and those kernels leave their work to NumPy.

Where OpenBLAS runs kernels narrower than the CPU's vectors (its AVX2 kernels on an
AVX-512 machine), the kernels' float32 products run ember's own instead (`own_product`,
csrc/gemm.c): a rule from what the machine is, fixed for the process.

When the native runtime loads, OpenBLAS's parallel jobs are handed to its pool
(`hand_threads_to`): every threaded OpenBLAS call in the process, NumPy's own included,
then runs OpenBLAS's split (so its very numbers) on ember's threads, which sleep within
0.2 ms of the job, where OpenBLAS's own spin for about 0.1 s after each call.
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


# OpenBLAS's kernel sets (its `get_corename`) whose float32 product uses 512-bit vectors
_WIDE_CORES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})


def corename() -> str | None:
    """The kernel set NumPy's OpenBLAS chose for this CPU ("Haswell", "SkylakeX", ...), or
    None (no OpenBLAS found)."""
    if "core" not in _found:
        _found["core"] = None
        lib = openblas()
        for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                     "scipy_openblas_get_corename", "openblas_get_corename"):
            fn = getattr(lib, name, None) if lib is not None else None
            if fn is not None:
                fn.restype = ctypes.c_char_p
                _found["core"] = (fn() or b"").decode(errors="replace")
                break
    return _found["core"]


def own_product(runtime: ctypes.CDLL) -> bool:
    """Whether the kernels' float32 products are ember's own (csrc/gemm.c) rather than
    BLAS's: where the runtime was built with AVX-512 (the CPU has it) and NumPy's OpenBLAS
    runs a kernel set without it. Measured on an AMD EPYC (Zen 5) whose OpenBLAS runs its
    Haswell kernels: one core, a 1024 product 16.8 -> 9.1 ms, a convolution's 128 x 576 by
    576 x 512 0.61 -> 0.36 ms. Where OpenBLAS has its AVX-512 kernels (the Intel Xeon
    machines: SkylakeX) or is not OpenBLAS, BLAS keeps the products."""
    core = corename()
    return bool(runtime.ember_own_gemm_built()) and core is not None and \
        core.lower() not in _WIDE_CORES


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


_CALLBACK_SETTERS = ("scipy_openblas_set_threads_callback_function64_",
                     "openblas_set_threads_callback_function64_",
                     "scipy_openblas_set_threads_callback_function",
                     "openblas_set_threads_callback_function")


def hand_threads_to(runtime: ctypes.CDLL) -> bool:
    """Give OpenBLAS's parallel jobs to the runtime's pool (`ember_blas_jobs`): OpenBLAS
    0.3.27 and later take a callback that runs them. Whether it was taken."""
    if "callback" not in _found:
        _found["callback"] = False
        lib = openblas()
        for name in _CALLBACK_SETTERS if lib is not None else ():
            setter = getattr(lib, name, None)
            if setter is not None:
                runtime.ember_set_blas_jobs.argtypes = [ctypes.c_void_p, ctypes.c_int]
                runtime.ember_set_blas_jobs(*_thread_tables(lib))
                setter.argtypes, setter.restype = [ctypes.c_void_p], None
                setter(ctypes.cast(runtime.ember_blas_jobs, ctypes.c_void_p))
                _found["callback"] = True
                break
    return _found["callback"]


def _thread_tables(lib: ctypes.CDLL) -> tuple[int | None, int]:
    """(address of OpenBLAS's `blas_num_threads`, the length of its per-thread tables from
    its build's MAX_THREADS), or (None, 0) where either is not found: the runtime numbers
    OpenBLAS's jobs past its own threads (see csrc/runtime.c)."""
    count, size = None, 0
    try:
        count = ctypes.addressof(ctypes.c_int.in_dll(lib, "blas_num_threads"))
    except ValueError:
        pass
    for name in ("scipy_openblas_get_config64_", "openblas_get_config64_",
                 "scipy_openblas_get_config", "openblas_get_config"):
        config = getattr(lib, name, None)
        if config is not None:
            config.restype = ctypes.c_char_p
            words = (config() or b"").decode(errors="replace").split()
            size = next((int(w[12:]) for w in words if w.startswith("MAX_THREADS=")
                         and w[12:].isdigit()), 0)
            break
    return (count, size) if count and size else (None, 0)


def threads_on_pool() -> bool:
    """Whether OpenBLAS's parallel jobs run on ember's pool (see `hand_threads_to`)."""
    return _found.get("callback", False)
