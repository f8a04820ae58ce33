"""`mx.random`: MLX's random numbers, bit for bit.

The samplers live in `_threefry` (pure NumPy); this module is the MLX-facing layer:
argument checking as MLX's bindings do it, array conversion, and the global key.

The global key works as in MLX's Python bindings (python/src/random.cpp): each thread
holds one key, seeded at first use from the process start time in milliseconds (one
time seed per process, shared by all threads). A draw without ``key=`` splits that key
in two, keeps the first half as the new global key and draws with the second, so
``seed(s); uniform()`` equals ``uniform(key=split(key(s))[1])``. ``mx.random.state`` is
MLX's read-only sentinel for that key (``state[0]`` is the calling thread's key).
"""

from __future__ import annotations

import functools
import inspect
import operator
import threading
import time
from collections.abc import Sequence

import numpy as np

from .._listing import listing
from . import _threefry as _tf
from ._array import array, array_from_numpy, numpy_of
from ._binding import bad_call
from ._compile_shapes import no_output_shapes
from ._device import check_stream, first_op
from ._dtypes import Dtype, bool_, float32, int32, uint32
from ._shapes import broadcast_shapes

__all__ = [
    "bernoulli",
    "categorical",
    "gumbel",
    "key",
    "laplace",
    "multivariate_normal",
    "normal",
    "permutation",
    "randint",
    "seed",
    "split",
    "truncated_normal",
    "uniform",
]

# -- the global key ----------------------------------------------------------------------

_time_seed: int | None = None  # fixed at first use, for every thread (a C++ static in MLX)


class _ThreadKey(threading.local):
    key: array | None = None


_thread = _ThreadKey()


def _state_key() -> array:
    """The calling thread's global key, seeded from the clock on first use."""
    global _time_seed
    if _thread.key is None:
        if _time_seed is None:
            _time_seed = time.time_ns() // 1_000_000
        _thread.key = array_from_numpy(_tf.key(_time_seed), uint32)
    return _thread.key


def _set_state_key(k: array) -> None:
    """Replace the calling thread's global key (for `compile`'s write-back)."""
    _thread.key = k


def _next_key() -> np.ndarray:
    """Split the global key: keep the first half, hand out the second."""
    keep, use = _tf.split(numpy_of(_state_key()))
    _thread.key = array_from_numpy(keep, uint32)
    return use


class _RandomState:
    """`mx.random.state`: one process-wide sentinel that reads as a one-element list
    holding the calling thread's key (so `compile` can capture it on any thread)."""

    __slots__ = ()

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: int) -> array:
        if isinstance(index, bool) or not isinstance(index, int):
            raise _bad_call("__getitem__", "__getitem__(self, index: int) -> object", index)
        if index not in (0, -1):
            raise IndexError("random state index out of range")
        return _state_key()

    def __iter__(self):
        return iter([_state_key()])


_RandomState.__module__ = "mlx.core.random"
_STATE = _RandomState()


def __getattr__(name: str):
    # NOTE: MLX makes `state` lazily so that importing does not seed the key.
    if name == "state":
        _state_key()
        return _STATE
    raise AttributeError(f"Module 'random' has no attribute {name!r}")


# -- argument conversion, as MLX's nanobind signatures accept arguments ------------------

_SIGNATURES = {
    "seed": "seed(seed: int) -> None",
    "key": "key(seed: int) -> mlx.core.array",
    "split": "split(key: array, num: int = 2, stream: StreamOrDevice = None) -> array",
    "uniform": "uniform(low: scalar | array = 0, high: scalar | array = 1, "
    "shape: Sequence[int] = [], dtype: Dtype | None = float32, key: array | None = None, "
    "stream: StreamOrDevice = None) -> array",
    "normal": "normal(shape: Sequence[int] = [], dtype: Dtype | None = float32, "
    "loc: scalar | array | None = None, scale: scalar | array | None = None, "
    "key: array | None = None, stream: StreamOrDevice = None) -> array",
    "randint": "randint(low: scalar | array, high: scalar | array, shape: Sequence[int] = [], "
    "dtype: Dtype | None = int32, key: array | None = None, "
    "stream: StreamOrDevice = None) -> array",
    "bernoulli": "bernoulli(p: scalar | array = 0.5, shape: Sequence[int] | None = None, "
    "key: array | None = None, stream: StreamOrDevice = None) -> array",
    "truncated_normal": "truncated_normal(lower: scalar | array, upper: scalar | array, "
    "shape: Sequence[int] | None = None, dtype: Dtype | None = float32, "
    "key: array | None = None, stream: StreamOrDevice = None) -> array",
    "gumbel": "gumbel(shape: Sequence[int] = [], dtype: Dtype | None = float32, "
    "key: array | None = None, stream: StreamOrDevice = None) -> array",
    "categorical": "categorical(logits: array, axis: int = -1, "
    "shape: Sequence[int] | None = None, num_samples: int | None = None, "
    "key: array | None = None, stream: StreamOrDevice = None) -> array",
    "permutation": "permutation(x: int | array, axis: int = 0, key: array | None = None, "
    "stream: StreamOrDevice = None) -> array",
    "laplace": "laplace(shape: Sequence[int] = [], dtype: Dtype | None = float32, "
    "loc: float = 0.0, scale: float = 1.0, key: array | None = None, "
    "stream: StreamOrDevice = None) -> array",
    "multivariate_normal": "multivariate_normal(mean: array, cov: array, "
    "shape: Sequence[int] = [], dtype: Dtype | None = float32, key: array | None = None, "
    "stream: StreamOrDevice = None) -> array",
}


class _Refused(TypeError):
    """An argument nanobind would not convert; `_binding` names the whole call."""


def _bad_call(fn: str, signature: str | None, value) -> TypeError:
    """The TypeError nanobind raises when an argument has the wrong type (naming `value`'s
    type only: the public functions re-raise it naming every argument)."""
    sig = signature or _SIGNATURES[fn]
    return _Refused(
        f"{fn}(): incompatible function arguments. The following argument types are "
        f"supported:\n    1. {sig}\n\nInvoked with types: {type(value).__name__}"
    )


# the `scalar | array` parameters: nanobind takes any value there but None (a value it
# cannot make an array of is refused later, by the array conversion's ValueError)
_SCALAR_OR_ARRAY = {"uniform": ("low", "high"), "randint": ("low", "high"),
                    "bernoulli": ("p",), "truncated_normal": ("lower", "upper")}


def _binding(fn):
    """`fn` refusing a call as nanobind refuses it: one that does not bind (a missing or
    extra argument, an unknown keyword) or gives an argument a type nanobind will not
    convert, with the TypeError naming MLX's signature and every argument's type."""
    name = fn.__name__
    signature = inspect.signature(fn)
    scalar_or_array = _SCALAR_OR_ARRAY.get(name, ())

    makes_stream = name not in ("seed", "key")  # (MLX's ops: the first makes the stream)

    @functools.wraps(fn)
    def bound(*args, **kwargs):
        if makes_stream:
            first_op()
        try:
            call = signature.bind(*args, **kwargs)
        except TypeError:
            raise bad_call(name, _SIGNATURES[name], args, kwargs) from None
        if any(k in call.arguments and call.arguments[k] is None for k in scalar_or_array):
            raise bad_call(name, _SIGNATURES[name], args, kwargs)
        try:
            return fn(*args, **kwargs)
        except _Refused:
            raise bad_call(name, _SIGNATURES[name], args, kwargs) from None

    return bound


def _int(value, fn: str, lo: int | None = None, hi: int | None = None) -> int:
    """A C integer argument: Python ints (and bools, `__index__` objects), in range."""
    if isinstance(value, float) or not hasattr(value, "__index__"):
        raise _bad_call(fn, None, value)
    v = operator.index(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _bad_call(fn, None, value)
    return v


def _shape(shape, fn: str) -> tuple[int, ...]:
    """A `Sequence[int]` as nanobind takes it (an integer vector of MLX's too), each size
    an int32 (past it: the OverflowError of nanobind's int conversion)."""
    if isinstance(shape, array):
        if shape.ndim != 1 or shape.dtype.kind not in "iu":
            raise _bad_call(fn, None, shape)
        shape = shape.tolist()
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (Sequence, np.ndarray)):
        raise _bad_call(fn, None, shape)
    out = tuple(_int(d, fn, -(2**63), 2**63 - 1) for d in shape)
    for d in out:
        if not -(2**31) <= d < 2**31:
            raise OverflowError(f"Integer value {d} is outside the supported range "
                                "[-2147483648, 2147483647].")
    return out


def _dtype(dtype, default: Dtype, fn: str) -> Dtype:
    if dtype is None:
        return default
    if not isinstance(dtype, Dtype):
        raise _bad_call(fn, None, dtype)
    return dtype


def _key(k, fn: str) -> np.ndarray:
    """The key to draw with: ``k`` itself, or the next split of the global key.

    MLX's bindings take the global key before they look at the values of the other
    arguments, so a call that then fails (bad dtype, ``stream=mx.gpu``) still advances
    it; the functions below call this first for the same reason.
    """
    if k is None:
        k = _next_key()
        no_output_shapes("RandomBits")  # (every draw starts from MLX's RandomBits)
        return k
    if not isinstance(k, array):
        raise _bad_call(fn, None, k)
    no_output_shapes("RandomBits")
    return numpy_of(k)


def _scalar_or_array(v, fn: str):
    """MLX's ``scalar | array`` argument: Python numbers stay numbers (``_threefry``
    gives them MLX's types); arrays become NumPy arrays in their MLX dtype."""
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, complex):
        return np.asarray(v, dtype=np.complex64)
    if isinstance(v, array):
        return numpy_of(v)
    if isinstance(v, (np.ndarray, np.generic)):
        return numpy_of(array(v))
    # (None is refused before, by `_binding`)
    raise ValueError(f"Invalid type {type(v).__name__} received in array initialization.")


def _out(values: np.ndarray, dtype: Dtype) -> array:
    return array_from_numpy(np.asarray(values), dtype)


# -- the public functions -------------------------------------------------------------------


@_binding
def seed(seed: int) -> None:
    """Seed the calling thread's global key with a 64-bit unsigned integer."""
    _thread.key = array_from_numpy(_tf.key(_int(seed, "seed", 0, 2**64 - 1)), uint32)


@_binding
def key(seed: int) -> array:
    """A PRNG key from a 64-bit unsigned seed: its high and low 32-bit halves."""
    return _out(_tf.key(_int(seed, "key", 0, 2**64 - 1)), uint32)


@_binding
def split(key: array, num: int = 2, stream=None) -> array:
    """Split ``key`` into ``num`` new keys (shape ``(num, 2)``)."""
    if not isinstance(key, array):
        raise _bad_call("split", None, key)
    num = _int(num, "split", -(2**31), 2**31 - 1)
    check_stream(stream)
    no_output_shapes("RandomBits")
    return _out(_tf.split(numpy_of(key), num), uint32)


@_binding
def uniform(
    low=0,
    high=1,
    shape: Sequence[int] = (),
    dtype: Dtype | None = float32,
    key: array | None = None,
    stream=None,
) -> array:
    """Uniform samples in ``[low, high)``; ``low``/``high`` broadcast to ``shape``."""
    shape, dt = _shape(shape, "uniform"), _dtype(dtype, float32, "uniform")
    k = _key(key, "uniform")
    check_stream(stream)
    lo, hi = _scalar_or_array(low, "uniform"), _scalar_or_array(high, "uniform")
    return _out(_tf.uniform(k, lo, hi, shape, dt.np), dt)


@_binding
def normal(
    shape: Sequence[int] = (),
    dtype: Dtype | None = float32,
    loc=None,
    scale=None,
    key: array | None = None,
    stream=None,
) -> array:
    """Normal samples ``loc + scale * N(0, 1)`` (complex64: each part ``N(0, 1/2)``)."""
    shape, dt = _shape(shape, "normal"), _dtype(dtype, float32, "normal")
    k = _key(key, "normal")
    check_stream(stream)
    loc = None if loc is None else _scalar_or_array(loc, "normal")
    scale = None if scale is None else _scalar_or_array(scale, "normal")
    return _out(_tf.normal(k, shape, dt.np, loc, scale), dt)


@_binding
def randint(
    low,
    high,
    shape: Sequence[int] = (),
    dtype: Dtype | None = int32,
    key: array | None = None,
    stream=None,
) -> array:
    """Random integers in ``[low, high)`` (via a float32 uniform, as MLX)."""
    shape, dt = _shape(shape, "randint"), _dtype(dtype, int32, "randint")
    k = _key(key, "randint")
    check_stream(stream)
    lo, hi = _scalar_or_array(low, "randint"), _scalar_or_array(high, "randint")
    return _out(_tf.randint(k, lo, hi, shape, dt.np), dt)


@_binding
def bernoulli(p=0.5, shape: Sequence[int] | None = None, key: array | None = None, stream=None):
    """Booleans that are true with probability ``p`` (shape defaults to ``p``'s)."""
    shape = None if shape is None else _shape(shape, "bernoulli")
    k = _key(key, "bernoulli")
    check_stream(stream)
    return _out(_tf.bernoulli(k, _scalar_or_array(p, "bernoulli"), shape), bool_)


@_binding
def truncated_normal(
    lower,
    upper,
    shape: Sequence[int] | None = None,
    dtype: Dtype | None = float32,
    key: array | None = None,
    stream=None,
) -> array:
    """Normal samples restricted to ``[lower, upper]``."""
    shape = None if shape is None else _shape(shape, "truncated_normal")
    dt = _dtype(dtype, float32, "truncated_normal")
    k = _key(key, "truncated_normal")
    check_stream(stream)
    lo = _scalar_or_array(lower, "truncated_normal")
    hi = _scalar_or_array(upper, "truncated_normal")
    return _out(_tf.truncated_normal(k, lo, hi, shape, dt.np), dt)


@_binding
def gumbel(
    shape: Sequence[int] = (),
    dtype: Dtype | None = float32,
    key: array | None = None,
    stream=None,
) -> array:
    """Standard Gumbel samples (CDF ``exp(-exp(-x))``)."""
    shape, dt = _shape(shape, "gumbel"), _dtype(dtype, float32, "gumbel")
    k = _key(key, "gumbel")
    check_stream(stream)
    return _out(_tf.gumbel(k, shape, dt.np), dt)


@_binding
def categorical(
    logits: array,
    axis: int = -1,
    shape: Sequence[int] | None = None,
    num_samples: int | None = None,
    key: array | None = None,
    stream=None,
) -> array:
    """Category indices (uint32) drawn from the unnormalised ``logits`` along ``axis``."""
    if not isinstance(logits, array):
        raise _bad_call("categorical", None, logits)
    axis = _int(axis, "categorical", -(2**31), 2**31 - 1)
    shape = None if shape is None else _shape(shape, "categorical")
    if num_samples is not None:
        num_samples = _int(num_samples, "categorical", -(2**31), 2**31 - 1)
    k = _key(key, "categorical")
    check_stream(stream)
    return _out(_tf.categorical(k, numpy_of(logits), axis, shape, num_samples), uint32)


@_binding
def permutation(x, axis: int = 0, key: array | None = None, stream=None) -> array:
    """A random permutation of ``arange(x)`` (uint32), or ``x`` shuffled along ``axis``."""
    if not (type(x) is int or isinstance(x, (bool, array))):  # MLX takes Python ints only
        raise _bad_call("permutation", None, x)
    axis = _int(axis, "permutation", -(2**31), 2**31 - 1)
    k = _key(key, "permutation")
    check_stream(stream)
    if isinstance(x, array):
        return _out(_tf.permutation(k, numpy_of(x), axis), x.dtype)
    if not -(2**31) <= x < 2**31:  # (the binding casts `x` to a C++ int)
        raise RuntimeError("std::bad_cast")
    return _out(_tf.permutation(k, int(x)), uint32)


@_binding
def laplace(
    shape: Sequence[int] = (),
    dtype: Dtype | None = float32,
    loc: float = 0.0,
    scale: float = 1.0,
    key: array | None = None,
    stream=None,
) -> array:
    """Laplace samples with mean ``loc`` and scale ``scale`` (Python floats, as MLX)."""
    shape, dt = _shape(shape, "laplace"), _dtype(dtype, float32, "laplace")
    for v in (loc, scale):
        if isinstance(v, (array, np.ndarray)) or not isinstance(v, (int, float, np.number)):
            raise _bad_call("laplace", None, v)
    k = _key(key, "laplace")
    check_stream(stream)
    return _out(_tf.laplace(k, shape, dt.np, float(loc), float(scale)), dt)


@_binding
def multivariate_normal(
    mean: array,
    cov: array,
    shape: Sequence[int] = (),
    dtype: Dtype | None = float32,
    key: array | None = None,
    stream=None,
) -> array:
    """Jointly normal samples ``mean + z @ sqrt(cov)`` (``cov`` positive semi-definite).

    The samples have shape ``broadcast(cov.shape[:-2], mean.shape[:-1], shape) + (n,)``;
    ``z`` are the same standard normal draws as ``normal``'s.
    """
    for v in (mean, cov):
        if not isinstance(v, array):
            raise _bad_call("multivariate_normal", None, v)
    shape = _shape(shape, "multivariate_normal")
    dt = _dtype(dtype, float32, "multivariate_normal")
    k = _key(key, "multivariate_normal")
    check_stream(stream)
    if dt != float32:
        raise ValueError("[multivariate_normal] dtype must be float32.")
    if mean.ndim < 1:
        raise ValueError("[multivariate_normal] mean must have at least one dimension.")
    if cov.ndim < 2:
        raise ValueError("[multivariate_normal] cov must have at least two dimensions.")
    n = mean.shape[-1]
    if cov.shape[-1] != cov.shape[-2]:
        raise ValueError("[multivariate_normal] last two dimensions of cov must be equal.")
    if cov.shape[-1] != n:
        raise ValueError("[multivariate_normal] mean and cov must have compatible shapes.")
    batch = broadcast_shapes(broadcast_shapes(cov.shape[:-2], mean.shape[:-1]), shape)
    # NOTE: MLX takes the square root as U sqrt(S) V^T from a float32 SVD of cov. For a
    # symmetric PSD matrix that is its unique PSD square root, which we compute from a
    # float64 SVD: the results agree to MLX's float32 SVD error, not to the bit.
    u, sv, vt = np.linalg.svd(numpy_of(cov).astype(np.float64))
    root = ((u * np.sqrt(sv)[..., None, :]) @ vt).astype(np.float32)
    z = np.asarray(_tf.normal(k, (*batch, n), np.float32))
    scaled = np.matmul(z[..., None, :], root)[..., 0, :]
    return mean + _out(scaled, float32)


__dir__ = listing(globals(), __all__)
