"""Python data read into an array by PyTorch's rules (`tensor`, `as_tensor`, `Tensor(...)`).

PyTorch reads data in three passes, and so does this module:

1. the shape, from the first element at each depth. Anything with the sequence protocol is a
   sequence (list, tuple, range, deque, array.array, memoryview, bytearray, a NumPy array, a
   class with `__len__` and `__getitem__`); a tensor, a set, a dict or a generator is not;
2. unless a dtype is given, the dtype every leaf promotes to (Python numbers, NumPy scalars and
   arrays, tensors); anything else "Could not infer dtype";
3. the values, each leaf converted for the target dtype as PyTorch converts one Python object
   (`__index__` for integers, `__float__` for reals, `__complex__` for complex numbers), with
   PyTorch's messages when a leaf cannot be converted.
"""

from __future__ import annotations

import collections
import ctypes
import operator

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from .copy import cast_array

_MAX_DIMS = 128  # PyTorch's limit on nesting depth
_PLAIN = frozenset((bool, int, float, complex))
_INT64_MIN, _INT64_END = -(2 ** 63), 2 ** 63

_sequence_check = ctypes.pythonapi.PySequence_Check
_sequence_check.argtypes = (ctypes.py_object,)
_sequence_check.restype = ctypes.c_int


def is_sequence(x) -> bool:
    """CPython's sequence protocol (what PyTorch tests), except that a tensor is no sequence."""
    cls = x.__class__
    if cls is list or cls is tuple:
        return True
    return not isinstance(x, Tensor) and _sequence_check(x) == 1


def type_name(cls: type) -> str:
    """A type's name as CPython's `tp_name` spells it in messages (`numpy.float32`, `Seq`)."""
    if cls.__flags__ & (1 << 9) or cls.__module__ == "builtins":  # a class written in Python
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def refuse_string(data) -> None:
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type_name(type(data))}'")


def _items(x, n: int) -> list:
    """The `n` items of sequence `x`, read by index as PyTorch reads them."""
    if x.__class__ is list or x.__class__ is tuple:
        return x
    if isinstance(x, collections.deque):  # (indexing a deque is linear)
        return list(x)
    return [x[i] for i in range(n)]


_warned_arrays: list = []


def _warn_arrays_in_lists() -> None:
    """PyTorch's warning (once a process) for a list of NumPy arrays, at the user's line."""
    _warned_arrays.append(True)
    warn_at_user("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                 "consider converting the list to a single numpy.ndarray with numpy.array() "
                 "before converting to a tensor.")


def data_shape(data) -> tuple[int, ...]:
    """The shape: each depth's length, read off the first element of the depth above."""
    sizes: list[int] = []
    x = data
    while is_sequence(x):
        if isinstance(x, np.ndarray) and x.ndim and x.dtype.kind not in "OUS":
            if sizes and not _warned_arrays:
                _warn_arrays_in_lists()
            return (*sizes, *x.shape)  # (its elements are NumPy scalars: nothing deeper)
        n = len(x)
        sizes.append(n)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type_name(type(x))}'")
        if n == 0:
            break
        try:
            x = x[0]
        except Exception:
            raise ValueError(
                f"could not determine the shape of object type '{type_name(type(x))}'") from None
    return tuple(sizes)


def _numpy_dtype(np_dtype) -> dt.dtype:
    return dt.from_numpy(np_dtype)


def _plain_dtype(kinds) -> dt.dtype:
    if complex in kinds:
        return dt.default_complex()
    if float in kinds:
        return dt.get_default_dtype()
    return dt.int64 if int in kinds else dt.bool_


def infer_dtype(x, plain_rows: set | None = None) -> dt.dtype:
    """The dtype PyTorch infers for `x` (one leaf, or every leaf of a sequence promoted).
    The ids of the lists found to hold plain Python numbers only go into `plain_rows`."""
    cls = x.__class__
    if cls in _PLAIN:
        return _plain_dtype((cls,))
    if cls is not list and cls is not tuple:
        if isinstance(x, (np.ndarray, np.generic)):
            return _numpy_dtype(x.dtype)
        if isinstance(x, float):
            return dt.get_default_dtype()
        if isinstance(x, int):
            return dt.bool_ if isinstance(x, bool) else dt.int64
        if isinstance(x, complex):
            return dt.default_complex()
        if isinstance(x, Tensor):
            return x._dtype
        refuse_string(x)
        if not is_sequence(x):
            raise RuntimeError(f"Could not infer dtype of {type_name(cls)}")
    n = len(x)
    if n == 0:
        return dt.get_default_dtype()
    if cls is list or cls is tuple:
        kinds = set(map(type, x))
        if kinds <= _PLAIN:
            if plain_rows is not None:
                plain_rows.add(id(x))
            return _plain_dtype(kinds)
    found = None
    for item in _items(x, n):
        if item is x:
            raise TypeError("new(): self-referential lists are incompatible")
        d = infer_dtype(item, plain_rows)
        found = d if found is None else dt.promote_types(found, d)
        if found is dt.complex128:  # nothing promotes further
            break
    return found


# --- one leaf converted for the target dtype, as PyTorch converts a Python object ---------------

def _as_int(x):
    """For an integer dtype: a float stays a float (range-checked later), else `__index__`."""
    if isinstance(x, float):
        return float(x)
    v = operator.index(x)
    if not _INT64_MIN <= v < _INT64_END:
        raise ValueError("Overflow when unpacking long long")
    return v


def _as_uint64(x):
    """For uint64: PyTorch unpacks a Python int as an unsigned long long (no negatives, no
    floats)."""
    if isinstance(x, float | np.floating):
        raise TypeError("an integer is required")
    v = operator.index(x)
    if v < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if v >= 2 * _INT64_END:
        raise OverflowError("int too big to convert")
    return v


def _as_float(x) -> float:
    if isinstance(x, float):
        return float(x)
    cls = type(x)
    if hasattr(cls, "__float__"):
        return float(x)
    if hasattr(cls, "__index__"):
        return float(operator.index(x))
    raise TypeError(f"must be real number, not {type_name(cls)}")


def _as_complex(x) -> complex:
    if isinstance(x, complex) or hasattr(type(x), "__complex__"):
        return complex(x)
    return complex(_as_float(x))


def _as_bool(x) -> bool:
    if isinstance(x, (np.bool_, float, complex)):
        return bool(x)
    return bool(operator.index(x))


def _converter(d: dt.dtype):
    if d is dt.bool_:
        return _as_bool
    if d._kind == 1:
        return _as_uint64 if d is dt.uint64 else _as_int
    return _as_complex if d.is_complex else _as_float


def _array_block(arr: np.ndarray, convert, d: dt.dtype) -> list:
    """A NumPy array filling a whole block, as nested numbers: its element type is checked once
    (every element converts as the first does), then its values are read in bulk."""
    convert(arr.flat[0])
    if arr.dtype == dt.bfloat16.np:
        arr = arr.astype(np.float32)
    if arr.dtype.kind == "c" and not (d.is_complex or d is dt.bool_):
        arr = arr.real  # (a NumPy complex scalar's `__float__` drops the imaginary part)
    return arr.tolist()


def _fast_sequence(x) -> list | tuple:
    """The items of `x` at a depth above the leaves (any iterable will do here, as in PyTorch)."""
    cls = x.__class__
    if cls is list or cls is tuple:
        return x
    if isinstance(x, collections.deque) or not is_sequence(x):
        try:
            it = iter(x)
        except TypeError:
            raise TypeError("not a sequence") from None
        return list(it)
    return _items(x, len(x))


def nested_values(data, shape: tuple[int, ...], d: dt.dtype, plain_rows: set = frozenset()):
    """`data`'s values as nested Python numbers of `shape`, each converted for dtype `d`
    (`plain_rows`: ids of the lists already known to hold plain Python numbers only)."""
    nd = len(shape)
    convert = _converter(d)

    def store(x, dim):
        if dim == nd:
            return convert(x)
        n = shape[dim]
        if isinstance(x, np.ndarray) and x.ndim:
            if x.shape[0] != n:
                raise ValueError(f"expected sequence of length {n} at dim {dim} "
                                 f"(got {x.shape[0]})")
            if x.shape == shape[dim:] and x.dtype.kind not in "OUS":
                return _array_block(x, convert, d)
        seq = _fast_sequence(x)
        if len(seq) != n:
            raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(seq)})")
        if dim == nd - 1 and (id(seq) in plain_rows or set(map(type, seq)) <= _PLAIN):
            return seq  # plain numbers: converted in bulk by `values_array`
        return [store(v, dim + 1) for v in seq]

    return store(data, 0)


def values_array(values, shape: tuple[int, ...], d: dt.dtype) -> np.ndarray:
    """Nested Python numbers as an array of dtype `d`, with PyTorch's conversion checks."""
    try:
        raw = np.array(values)
    except OverflowError:
        raw = np.array(values, dtype=object)
    raw = raw.reshape(shape)
    if d is dt.uint64 and raw.dtype.kind in "iufO":
        return _uint64_values(values, shape)
    if raw.dtype.kind in "Ou":  # Python ints beyond int64
        if d._kind <= 1 and d is not dt.bool_:
            raise ValueError("Overflow when unpacking long long")
        raw = raw.astype(np.bool_ if d is dt.bool_ else np.complex128 if d.is_complex
                         else np.float64)
    if raw.dtype.kind == "c" and not (d.is_complex or d is dt.bool_):
        if d._kind == 1:
            raise TypeError("'complex' object cannot be interpreted as an integer")
        raise TypeError("must be real number, not complex")
    if d._kind == 1:
        if raw.dtype.kind == "f" and (np.abs(raw[np.isfinite(raw)]) >= 2.0 ** 53).any():
            # floats and large ints together: each int keeps its exact value
            raw = np.array([_exact_int(v, d) for v in np.array(values, dtype=object).flat],
                           dtype=np.int64).reshape(shape)
        _check_int_range(raw, d)
        if raw.dtype.kind == "f":
            raw = np.trunc(raw).astype(np.int64)
    return cast_array(raw, d)


def _uint64_values(values, shape: tuple[int, ...]) -> np.ndarray:
    """Nested Python ints as uint64, each unpacked as PyTorch unpacks an unsigned long long."""
    leaves = np.array(values, dtype=object).reshape(shape)
    return np.array([_as_uint64(v) for v in leaves.flat], dtype=np.uint64).reshape(shape)


def _exact_int(v, d: dt.dtype) -> int:
    """One leaf for integer dtype `d`: a float range-checked and truncated, an int as it is."""
    if isinstance(v, float):
        _check_int_range(np.array([v]), d)
    elif not _INT64_MIN <= v < _INT64_END:
        raise ValueError("Overflow when unpacking long long")
    return int(v)


def _check_int_range(raw: np.ndarray, d: dt.dtype) -> None:
    if raw.size == 0 or raw.dtype.kind == "b" or raw.dtype == d.np:
        return
    info = np.iinfo(d.np)
    # NOTE: PyTorch lets an unsigned type take ints down to -max and wraps them
    # (tensor([-1], dtype=uint8) == 255).
    lo = -int(info.max) if info.min == 0 and raw.dtype.kind != "f" else int(info.min)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(raw) if raw.dtype.kind == "f" else np.zeros((), bool)
        if bad.any() or raw.min() < lo or raw.max() > info.max:
            raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
