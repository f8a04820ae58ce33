"""Native kernels beside their NumPy twins: the libraries, the mode, and the choice per call.

`kernels["cpu"][prim]` is what eager evaluation runs on the CPU. A primitive with a native
kernel has there a chooser holding both twins (`.numpy`, `.native`): per call it runs the
native kernel when native kernels are on and that kernel takes these arrays (its dtype and
layout; it answers `NotImplemented` otherwise), and the NumPy kernel in every other case.
A size gate given at registration sends calls under it to NumPy before any of that.
A primitive without one keeps its NumPy kernel in the table untouched, so `a + b` pays
nothing for any of this.

A family's source (`csrc/<family>.c`) is written once against `scalar_t` and `FN(name)`
and compiled per dtype: its float32 library on the first call that needs the family, its
float64 one on the first call of a `_f64` kernel (`Family`), so a float32 program waits for
half the compiling. Both come after the runtime library (`csrc/runtime.c`, the thread
pool) whose symbols they use.
`EMBER_KERNELS=numpy` (read on first use) or `use("numpy")` keeps everything on NumPy.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from contextlib import contextmanager

from .. import _tensor
from .._core.primitive import Member, kernels
from . import blas, buffers, toolchain

_cpu = kernels["cpu"]
_state = {"mode": None}  # "native" or "numpy", resolved on first use
_libs: dict = {}  # family -> CDLL, or None where it could not be built
_lock = threading.Lock()
DTYPES = (("float", "f32"), ("double", "f64"))


def mode() -> str:
    """"native" or "numpy": whether native kernels run (EMBER_KERNELS, default native)."""
    m = _state["mode"]
    if m is None:
        m = os.environ.get("EMBER_KERNELS", "native").strip().lower() or "native"
        if m not in ("native", "numpy"):
            raise RuntimeError(f"EMBER_KERNELS must be 'native' or 'numpy', got {m!r}")
        _state["mode"] = m
    return m


@contextmanager
def use(m: str):
    """Run the block with native kernels on ("native") or off ("numpy")."""
    if m not in ("native", "numpy"):
        raise ValueError(f"mode must be 'native' or 'numpy', got {m!r}")
    old = mode()
    _state["mode"] = m
    try:
        yield
    finally:
        _state["mode"] = old


def unit_source(family: str, suffix: str | None = None) -> str:
    """The translation unit compiled for `family`: its file instantiated for the dtype of
    `suffix` ("f32", "f64"), or for each dtype."""
    dtypes = [d for d in DTYPES if suffix in (None, d[1])]
    names = " and ".join({"f32": "float32", "f64": "float64"}[sfx] for _, sfx in dtypes)
    parts = [f"/* {family}: csrc/{family}.c for {names} */"]
    for ctype, sfx in dtypes:
        parts += [f"#define scalar_t {ctype}", f"#define FN(name) name##_{sfx}",
                  f'#include "{family}.c"', "#undef scalar_t", "#undef FN"]
    return "\n".join(parts) + "\n"


def _read(name: str) -> str:
    with open(os.path.join(toolchain.CSRC, name)) as f:
        return f.read()


def runtime() -> ctypes.CDLL | None:
    """The runtime library (thread pool, NumPy's BLAS by address), built and loaded once,
    its symbols global; loading it also makes the buffer cache NumPy's memory handler in
    this context (`buffers`)."""
    lib = _libs.get("runtime", False)
    if lib is False:
        lib = toolchain.try_build("runtime", _read("runtime.c"), global_symbols=True)
        if lib is not None:
            lib.ember_set_num_threads.argtypes = [ctypes.c_int]
            lib.ember_set_num_threads(_threads())
            found = blas.gemm()
            if found is not None:
                lib.ember_set_blas.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
                lib.ember_set_blas(*found)
                blas.hand_threads_to(lib)  # (OpenBLAS's jobs then run on the pool)
                _state["own_product"] = blas.own_product(lib)
                _state["own_built"] = bool(lib.ember_own_gemm_built())
            buffers.install(lib)  # (large freed arrays come back without page faults)
        _libs["runtime"] = lib
    return lib


def own_product() -> bool:
    """Whether float32 kernel products run ember's own product (`blas.own_product`): read
    after the runtime is loaded (False before, and without it)."""
    return _state.get("own_product", False)


def own_built() -> bool:
    """Whether ember's own float32 product was compiled in (the CPU has AVX-512): kernels
    that feed it their operand panel by panel (a convolution's columns, never stored
    whole) use it on such machines whichever product serves whole matrices."""
    return _state.get("own_built", False)


def _on_large_result() -> None:
    """A first large array made without a native kernel: load the runtime (and with it the
    buffer cache) where native kernels are on."""
    if mode() == "native":
        runtime()


_tensor.on_large_result[0] = _on_large_result

_requested: list = [None]  # the count set by `ember.set_num_threads`, or None


def default_threads() -> int:
    """One kernel thread per core this process may run on (at most 8); fewer where
    OMP_NUM_THREADS asks for fewer (as PyTorch's default count, which takes it up to the
    cores there are)."""
    try:
        cores = min(len(os.sched_getaffinity(0)), 8)
    except AttributeError:
        cores = min(os.cpu_count() or 1, 8)
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    return min(int(env), cores) if env.isdigit() and int(env) > 0 else cores


def _threads() -> int:
    return _requested[0] or default_threads()


def set_num_threads(n: int) -> None:
    """Size the native pool (called by `ember.set_num_threads`; applied when it loads)."""
    _requested[0] = n
    lib = _libs.get("runtime")
    if lib:
        lib.ember_set_num_threads(n)


class Unavailable(RuntimeError):
    """A family's library for one dtype could not be built (its other dtype's could)."""


class Family:
    """A kernel family's libraries, one per dtype, read like one library: `fam.name_f64`
    is the C function `name_f64`, from the float64 library, built on first use."""

    def __init__(self, family: str, f32: ctypes.CDLL):
        self.family = family
        self.units = {"f32": f32}

    def unit(self, sfx: str) -> ctypes.CDLL | None:
        lib = self.units.get(sfx, False)
        if lib is False:
            with _lock:
                lib = self.units.get(sfx, False)
                if lib is False:
                    lib = self.units[sfx] = toolchain.try_build(
                        f"{self.family}-{sfx}", unit_source(self.family, sfx))
        return lib

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("family", "units"):
            raise AttributeError(name)
        sfx = name.rpartition("_")[2]
        lib = self.unit(sfx if sfx in _SUFFIXES else "f32")
        if lib is None:
            raise Unavailable(f"ember: the {sfx} kernels of {self.family} could not be built")
        return getattr(lib, name)


_SUFFIXES = tuple(sfx for _, sfx in DTYPES)


def library(family: str) -> Family | None:
    """A kernel family's libraries (its float32 one loaded), or None (native kernels off,
    no compiler, or it failed to build)."""
    if mode() != "native":
        return None
    lib = _libs.get(family, False)
    if lib is not False:
        return lib
    with _lock:
        lib = _libs.get(family, False)
        if lib is False:
            f32 = None if runtime() is None else \
                toolchain.try_build(f"{family}-f32", unit_source(family, "f32"))
            lib = _libs[family] = None if f32 is None else Family(family, f32)
    return lib


def register(prim, family: str, native: Callable, min_size: tuple | None = None,
             into: Callable | None = None) -> None:
    """Put `native(lib, *arrays, **params)` beside `prim`'s NumPy kernel: eager runs it when
    native kernels are on and it does not return NotImplemented. `prim` may be a family's
    member: its own kernel (which the family's calls run) becomes the chooser.

    A NumPy kernel with an in-place form (`ops._inplace_kernel.writes_into`) keeps it, and
    `into(lib, dst, *arrays, **params)`, where given, is its native twin (True: written).

    `min_size`, a (mapping, key) pair: the fewest elements of the first array the native
    kernel is tried for, read there on each call (so that a test may lower it). A smaller
    call goes straight to NumPy, with no mode or library lookup and no call of `native`
    (which keeps its own checks for direct calls): the small tensors of an eager training
    step pay one comparison for the native twin they would decline."""
    member = prim.__class__ is Member
    numpy_kernel = prim.kernel if member else _cpu[prim]

    def choose(*arrays, **params):
        # NOTE: the hot path of every op with a native twin: the mode read inline (mode()
        # only before it is resolved), the library found by one dict read once it is loaded
        if (_state["mode"] or mode()) == "native":
            lib = _libs.get(family) or library(family)
            if lib is not None:
                try:
                    out = native(lib, *arrays, **params)
                except Unavailable:
                    out = NotImplemented
                if out is not NotImplemented:
                    return out
        return numpy_kernel(*arrays, **params)

    if min_size is not None:
        choose = _gated(choose, numpy_kernel, *min_size)
    numpy_into = getattr(numpy_kernel, "into", None)
    if numpy_into is not None:
        choose.into = numpy_into if into is None else \
            _choose_into(family, into, numpy_into, min_size)
    choose.numpy = numpy_kernel
    choose.native = native
    choose.family = family
    choose.__doc__ = f"{prim.name}: the native kernel ({family}.c) or NumPy's"
    # (named as the NumPy kernel, the op's own: where an op is defined reads the kernel)
    for attr in ("__module__", "__name__", "__qualname__"):
        setattr(choose, attr, getattr(numpy_kernel, attr, getattr(choose, attr)))
    if member:
        prim.kernel = choose
    else:
        _cpu[prim] = choose


def _choose_into(family: str, into: Callable, numpy_into: Callable,
                 min_size: tuple | None) -> Callable:
    """The in-place form of a chooser: `into`'s native write where native kernels are on
    (and the destination passes the size gate) and it takes these arrays, else NumPy's."""
    where, key = min_size if min_size is not None else ({"n": 0}, "n")

    def choose_into(dst, *arrays, **params):
        if dst.size >= where[key] and (_state["mode"] or mode()) == "native":
            lib = _libs.get(family) or library(family)
            if lib is not None:
                try:
                    if into(lib, dst, *arrays, **params):
                        return True
                except Unavailable:
                    pass
        return numpy_into(dst, *arrays, **params)

    return choose_into


def _gated(choose: Callable, numpy_kernel: Callable, where, key) -> Callable:
    """`choose` behind a size gate: a call whose first array has fewer than `where[key]`
    elements, or whose first operand is a Python number (`1 + x`), runs `numpy_kernel` at
    once."""
    def gated(*arrays, **params):
        try:
            small = arrays[0].size < where[key]
        except AttributeError:
            small = True
        if small:
            return numpy_kernel(*arrays, **params)
        return choose(*arrays, **params)

    return gated


def twins(prim) -> tuple[Callable, Callable] | None:
    """(numpy kernel, native kernel) of `prim`, or None if it has no native kernel."""
    k = prim.kernel if prim.__class__ is Member else _cpu.get(prim)
    return (k.numpy, k.native) if hasattr(k, "native") else None
