"""The kernels' thread pool, sharing out one large kernel across it, and BLAS's threads.

NumPy releases the GIL inside its loops, so a kernel run on disjoint slices from a
few threads scales with the cores (PyTorch's CPU kernels are multi-threaded too).
Kernels that call BLAS on these threads hold OpenBLAS to one thread; a large float
product is shared out the same way, one single-threaded BLAS call per thread (see `blas`).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..native import blas as blas_library
from ..native.calls import ptr
from ..native.kernels import default_threads

_pool_state: list = [None, None, 1]  # pid, executor, workers
_requested: list = [None]  # the thread count set by `ember.set_num_threads`, or None
_PREFIX = "ember-kernel"
MIN_CHUNK = 1 << 16  # elements: below two of these per worker, threads cost more than they save


def thread_pool():
    """(executor, workers): the kernels' thread pool (None on one core); rebuilt in a fork."""
    pid = os.getpid()
    if _pool_state[0] != pid:
        workers = _requested[0] or default_workers()
        pool = ThreadPoolExecutor(workers, thread_name_prefix=_PREFIX) \
            if workers > 1 else None
        _pool_state[:] = [pid, pool, workers]
    return _pool_state[1], _pool_state[2]


def default_workers() -> int:
    """One kernel thread per core this process may run on (at most 8): the native pool's
    rule."""
    return default_threads()


def set_workers(n: int) -> None:
    """Size the kernel pool to `n` threads (1: kernels run on the calling thread only)."""
    old = _pool_state[1] if _pool_state[0] == os.getpid() else None
    _requested[0] = n
    _pool_state[:] = [None, None, 1]
    if old is not None:
        old.shutdown(wait=True)


def workers() -> int:
    return thread_pool()[1]


def over_chunks(fn: Callable[[int, int], None], n: int) -> None:
    """Call `fn(lo, hi)` over [0, n): in one piece, or one contiguous chunk per worker."""
    pool, workers = thread_pool()
    if pool is None or n < 2 * MIN_CHUNK:
        fn(0, n)
        return
    step = max(-(-n // workers), MIN_CHUNK)
    with one_blas_thread:  # (a kernel may call BLAS; see `blas`)
        list(pool.map(quiet(lambda lo: fn(lo, min(lo + step, n))), range(0, n, step)))


BATCH_CHUNK_BYTES = 4 << 20  # a batch chunk's working set: large products, still cache-sized


def over_batch(n: int, sample_bytes: int, flops: int, fn, scratch: int = 0, dtype=None):
    """Call `acc = fn(lo, hi, buf, acc)` over chunks of a batch [0, n), each chunk's working
    set about BATCH_CHUNK_BYTES (`sample_bytes` per sample), shared out to the kernel
    threads (one OpenBLAS thread each) unless `flops` is too small to pay for them. `buf`
    is a flat scratch array of `scratch` elements per sample, reused across a thread's
    chunks; `acc` starts as None on each thread. Returns each thread's final `acc`."""
    pool, workers = thread_pool()
    chunk = max(1, min(n, BATCH_CHUNK_BYTES // max(sample_bytes, 1)))
    serial = (pool is None or n < 2 or flops < SMALL_PRODUCT
              or threading.current_thread().name.startswith(_PREFIX))

    def run(span):
        lo, hi = span
        size = -(-(hi - lo) // -(-(hi - lo) // chunk))  # equal chunks of at most `chunk`
        buf = np.empty(scratch * size, dtype) if scratch else None
        acc = None
        for start in range(lo, hi, size):
            acc = fn(start, min(start + size, hi), buf, acc)
        return acc

    if serial:
        return [run((0, n))]
    # An equal share of the batch per thread (each cut into chunks), so no thread waits
    # on another's extra chunk.
    parts = min(workers, n)
    cuts = [n * i // parts for i in range(parts + 1)]
    with one_blas_thread:
        return list(pool.map(quiet(run), zip(cuts, cuts[1:])))


def quiet(fn: Callable) -> Callable:
    """`fn` for a kernel thread: NumPy's error state is per thread, and ember's (no warnings
    for 1/0 or overflow, as PyTorch) is set on the importing thread only."""
    def run(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return run


def elementwise(body: Callable, out, *srcs) -> None:
    """Run `body(out, *srcs)` (same-shaped arrays), split across the workers when all are
    C-order and large."""
    if not (out.flags.c_contiguous and all(s.flags.c_contiguous for s in srcs)):
        body(out, *srcs)
        return
    flat = [a.reshape(-1) for a in (out, *srcs)]
    over_chunks(lambda lo, hi: body(*(a[lo:hi] for a in flat)), out.size)


# --- BLAS threads ----------------------------------------------------------------------

_set_blas_threads = blas_library.thread_setter()
SMALL_PRODUCT = 1 << 23  # flops of one matrix product below which one thread is faster
OPENBLAS_SERIAL = 1 << 19  # flops below which OpenBLAS itself uses one thread (m n k < 2^18)
POOL_BATCH = 1 << 22  # flops of a batch of products from which the pool shares them out


class _BlasThreads:
    """OpenBLAS's thread count, set at the edges of ember's calls. It is process-wide in
    NumPy's build, so every holder on every thread shares one state: while any holds it
    to one thread it is one; else while any runs a product on it, the pool's size; else
    what the caller had (setting it is a library call: done only when that changes)."""

    def __init__(self) -> None:
        self.single = 0  # holders of one thread
        self.wide = 0  # holders of the pool's size
        self.saved = None
        self.lock = threading.Lock()

    def _apply(self) -> None:
        if not self.single and not self.wide:
            _set_blas_threads(self.saved)
            self.saved = None
            return
        want = 1 if self.single else workers()
        was = _set_blas_threads(want)
        if self.saved is None:
            self.saved = was

    def change(self, single: bool, by: int) -> None:
        """One holder of one thread (`single`) or of the pool's size more (`by` 1) or
        fewer (-1)."""
        if _set_blas_threads is not None:
            with self.lock:
                before = (bool(self.single), bool(self.wide))
                if single:
                    self.single += by
                else:
                    self.wide += by
                if (bool(self.single), bool(self.wide)) != before:
                    self._apply()


class _Hold:
    """`with one_blas_thread:` holds OpenBLAS to one thread; `with pool_blas_threads:` to
    the pool's size (nested and concurrent holders share `_blas_threads`)."""

    def __init__(self, single: bool) -> None:
        self.single = single

    def __enter__(self) -> None:
        _blas_threads.change(self.single, 1)

    def __exit__(self, *exc) -> None:
        _blas_threads.change(self.single, -1)


_blas_threads = _BlasThreads()
one_blas_thread = _Hold(True)
pool_blas_threads = _Hold(False)


def blas(fn: Callable, a, b, flops: int):
    """`fn(a, b)`, a BLAS product, on as many threads as pays (`flops`: of one matrix).

    A small product runs on the calling thread with OpenBLAS held to one thread (its
    threads would cost more to wake than they save). A large one runs on the native
    pool's threads: one product is NumPy's own call with OpenBLAS's jobs handed to the
    pool (OpenBLAS's split, so NumPy's exact numbers; `native.blas.hand_threads_to`);
    a batch whose products add up to a large one is shared out by matrices or blocks of
    rows, one single-threaded OpenBLAS call per thread (`_pool_product`; NumPy would
    call BLAS once per matrix, each too small to thread). Where OpenBLAS takes no
    callback (before 0.3.27), one product is shared out the same way. Anything else
    large (another dtype, a layout BLAS cannot read, native kernels off) is NumPy's own
    call on OpenBLAS's threads. Not OpenBLAS's threads where it can be helped: they
    busy-wait for about 0.1 s after every call and take the cores from the kernels that
    follow (the MNIST CNN's step, two threads: 83 ms after its threaded linear layer,
    64 ms with the product on the pool), where the pool's threads sleep within 0.2 ms.
    """
    if fn is np.matmul and (a.ndim > 2 or b.ndim > 2) and a.ndim > 1 and b.ndim > 1:
        count = math.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        if flops * count >= POOL_BATCH and workers() > 1 \
                and not threading.current_thread().name.startswith(_PREFIX):
            out = _pool_product(a, b)
            if out is not None:
                return out
    if flops < OPENBLAS_SERIAL:  # OpenBLAS runs these on one thread by itself
        return fn(a, b)
    # (the thread's name, the costliest test, only for a product big enough to share out)
    if flops < SMALL_PRODUCT or workers() == 1 \
            or threading.current_thread().name.startswith(_PREFIX):
        with one_blas_thread:
            return fn(a, b)
    if a.ndim <= 2 and b.ndim <= 2 and _jobs_on_pool():
        with pool_blas_threads:
            return fn(a, b)
    if fn is np.matmul and a.ndim == 2 and b.ndim == 2:
        out = _pool_product(a, b)
        if out is not None:
            return out
    return fn(a, b)


def _jobs_on_pool() -> bool:
    """Whether OpenBLAS's parallel jobs run on the native pool (loads the runtime, which
    hands them over, where native kernels are on)."""
    if blas_library.threads_on_pool():
        return True
    from .. import native

    return native.available() and blas_library.threads_on_pool()


def blas_layout(rows: int, cols: int, s0: int, s1: int):
    """(transposed, leading dimension) BLAS reads a rows x cols matrix with element
    strides (s0, s1) by in place, or None (NumPy's matmul makes the same choice)."""
    if s1 == 1 and s0 >= max(cols, 1):
        return 0, s0
    if s0 == 1 and s1 >= max(rows, 1):
        return 1, s1
    return None


def _operand(a: np.ndarray):
    """`blas_layout` of an array's matrices (None where a stride is no whole number of items)."""
    it = a.itemsize
    s0, s1 = a.strides[-2:]
    if s0 % it or s1 % it:
        return None
    return blas_layout(*a.shape[-2:], s0 // it, s1 // it)


def _batch_stride(a: np.ndarray):
    """The one stride (in items) that steps through `a`'s leading dims as one, or None."""
    step = None
    for size, stride in zip(a.shape[:-2], a.strides[:-2]):
        if size == 1:
            continue
        if step is not None and step != stride * size:
            return None
        step = stride
    return 0 if step is None else step // a.itemsize


def _pool_product(a: np.ndarray, b: np.ndarray):
    """a @ b (matrices or batches of them, batch dims broadcast) on the native pool
    (csrc/runtime.c), or None where it does not apply: another dtype, a layout BLAS
    cannot read in place, native kernels off, nothing to multiply, or both operands at
    one address (NumPy multiplies `a @ a.T` with `syrk`, which rounds otherwise)."""
    from .. import native

    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64) or not a.size \
            or not b.size or not native.available() or not blas_library.gemm() \
            or ptr(a) == ptr(b):
        return None
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if batch:
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
    pa, pb = _operand(a), _operand(b)
    sa, sb = _batch_stride(a), _batch_stride(b)
    if pa is None or pb is None or sa is None or sb is None or \
            any(s % a.itemsize for s in a.strides + b.strides):
        return None
    fn = _pool_entry.get("fn")
    if fn is None:
        import ctypes

        fn = native.runtime().ember_gemm_batched
        P, I64, INT = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
        fn.argtypes = [INT, INT, INT, I64, I64, I64, I64, P, I64, I64, P, I64, I64, P, I64,
                       I64]
        fn.restype = None
        _pool_entry["fn"] = fn
    m, k = a.shape[-2:]
    n = b.shape[-1]
    out = np.empty(batch + (m, n), a.dtype)
    with one_blas_thread:
        fn(int(a.dtype == np.float64), pa[0], pb[0], math.prod(batch), m, n, k, ptr(a),
           pa[1], sa, ptr(b), pb[1], sb, ptr(out), max(n, 1), m * n)
    return out


_pool_entry: dict = {}
