"""native/blas.py and csrc/runtime.c: OpenBLAS's parallel jobs handed to the native pool.

A threaded OpenBLAS product then runs OpenBLAS's own split on ember's threads, so it gives
the numbers OpenBLAS's own threads give (NumPy's call), bit for bit; where the pool is
busy, its jobs run on threads made for the call, with the same numbers."""

from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager

import numpy as np
import pytest

from ember import native
from ember.native import blas
from ember.ops import _parallel

from helpers import rand_array

pytestmark = pytest.mark.skipif(
    not native.available() or not blas.threads_on_pool(),
    reason="native kernels off, or OpenBLAS takes no thread callback (before 0.3.27)")

DOJOB = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
JOBS = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p,
        ctypes.c_int]


def _runtime():
    rt = native.runtime()
    rt.ember_blas_calls.argtypes, rt.ember_blas_calls.restype = [ctypes.c_int], ctypes.c_long
    for name in ("ember_blas_jobs", "ember_blas_jobs_apart"):
        getattr(rt, name).argtypes, getattr(rt, name).restype = JOBS, None
    return rt


@contextmanager
def _callback(fn):
    """OpenBLAS's thread callback set to `fn` (an address, or None: its own threads)."""
    lib = blas.openblas()
    setter = next(getattr(lib, n) for n in blas._CALLBACK_SETTERS if hasattr(lib, n))
    setter.argtypes = [ctypes.c_void_p]
    setter(fn)
    try:
        yield
    finally:
        setter(ctypes.cast(_runtime().ember_blas_jobs, ctypes.c_void_p))


def _openblas_own(a, b):
    """a @ b on OpenBLAS's own threads (its split, the one NumPy's call uses)."""
    with _callback(None), _parallel.pool_blas_threads:
        return a @ b


_LAYOUTS = {"c": lambda x: x, "f": np.asfortranarray, "t": lambda x: x.T.copy().T}


@pytest.mark.parametrize("lb", sorted(_LAYOUTS))
@pytest.mark.parametrize("la", sorted(_LAYOUTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64],
                         ids=["float32", "float64", "complex64"])
def test_a_threaded_product_runs_on_the_pool_with_openblas_own_numbers(dtype, la, lb):
    rt = _runtime()
    a = _LAYOUTS[la](rand_array((517, 389), dtype))
    b = _LAYOUTS[lb](rand_array((389, 611), dtype, seed=1))
    before = rt.ember_blas_calls(0)
    with _parallel.pool_blas_threads:
        got = a @ b
    assert rt.ember_blas_calls(0) == before + 1  # (one call, its jobs on the pool)
    np.testing.assert_array_equal(got, _openblas_own(a, b))


def test_the_product_ember_routes_to_the_pool_is_numpys_own():
    rt = _runtime()
    a, b = rand_array((700, 300)), rand_array((300, 500), seed=1)
    assert 2 * 700 * 300 * 500 >= _parallel.SMALL_PRODUCT
    import ember

    before = rt.ember_blas_calls(0)
    got = (ember.tensor(a) @ ember.tensor(b)).numpy()
    assert rt.ember_blas_calls(0) == before + (_parallel.workers() > 1)
    np.testing.assert_array_equal(got, _openblas_own(a, b))


def test_jobs_on_threads_made_for_the_call_give_the_same_numbers():
    rt = _runtime()
    a, b = rand_array((611, 389), np.float64), rand_array((389, 517), np.float64, seed=1)
    before = rt.ember_blas_calls(1)
    with _callback(ctypes.cast(rt.ember_blas_jobs_apart, ctypes.c_void_p)), \
            _parallel.pool_blas_threads:
        got = a @ b
    assert rt.ember_blas_calls(1) == before + 1
    np.testing.assert_array_equal(got, _openblas_own(a, b))


@pytest.mark.parametrize("runner", ["ember_blas_jobs", "ember_blas_jobs_apart"])
def test_every_job_runs_once_on_a_thread_of_its_own_numbered_past_openblas_threads(runner):
    # OpenBLAS's jobs wait on each other, so they must all run at once; their numbers
    # start past the status words OpenBLAS's own idle threads watch (csrc/runtime.c)
    rt = _runtime()
    size, n = 24, 3
    data = (ctypes.c_char * (size * n))()
    seen = []

    def job(number, where, arg):
        seen.append((number, where - ctypes.addressof(data), arg, threading.get_ident()))

    server = ctypes.c_int.in_dll(blas.openblas(), "blas_num_threads").value
    getattr(rt, runner)(1, DOJOB(job), n, size, ctypes.addressof(data), 7)
    seen.sort()
    first = server - 1
    assert [s[:3] for s in seen] == [(first + i, size * i, 7) for i in range(n)]
    assert len({s[3] for s in seen}) == n  # (each on its own thread)


def test_products_from_racing_threads_stay_exact():
    # Python threads multiplying at once, with another running native kernels on the
    # pool: each product runs on the pool or on threads made for it, with the same numbers
    rt = _runtime()
    a, b = rand_array((400, 300)), rand_array((300, 350), seed=1)
    want = _openblas_own(a, b)
    big = rand_array((1 << 21,))
    import ember

    x = ember.tensor(big)
    wrong, done = [], threading.Event()

    def multiply():
        with _parallel.pool_blas_threads:
            for _ in range(20):
                if not np.array_equal(a @ b, want):
                    wrong.append(1)

    def add():
        while not done.is_set():
            x + x

    before = rt.ember_blas_calls(0) + rt.ember_blas_calls(1)
    adder = threading.Thread(target=add)
    adder.start()
    workers = [threading.Thread(target=multiply) for _ in range(3)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    done.set()
    adder.join()
    assert not wrong
    assert rt.ember_blas_calls(0) + rt.ember_blas_calls(1) == before + 60
