"""`mx.array`: MLX's array over an ember tensor.

An array holds an ember `Tensor` (`_t`, in its dtype's carrier: see `_dtypes`) and its
MLX dtype. Every op binds ember's primitives on `_t`, so ember's transforms (`grad`,
`vjp`, `jvp`, `vmap`) and its compiler see MLX programs as they see PyTorch ones.
Arrays are values: no op writes into a tensor another array holds. `x[i] = v` gives `x`
a new tensor (other names bound to the same `array` object see the change, slices taken
earlier do not), which is MLX's behaviour (its slices copy).
"""

from __future__ import annotations

import numpy as np

import ember as E

from ... import _tensor
from . import _dtypes as D
from ._arithmetic import mlx_floor_divide, mlx_power, mlx_remainder
from ._binding import bad_call, type_name
from ._dtypes import Dtype
from ._indexing import SETITEM_SIGNATURE, fit, index_of, ints_among_arrays, kept_shape
from ._lists import convert_list
from ._masked_write import masked_write
from ._tracers import check_readable

Tensor = _tensor.Tensor
_new = object.__new__


class array:
    """An MLX array (see the module docstring)."""

    __slots__ = ("_t", "_dtype", "__weakref__")
    # (no __array_priority__: a NumPy value on an operator's left takes the array as NumPy
    # data and gives an ndarray, as it does with MLX's)

    def __init__(self, *args, **kwargs) -> None:
        try:
            val, dtype = _init_arguments(*args, **kwargs)
        except TypeError:
            val = None
        if val is None or dtype is not None and not isinstance(dtype, Dtype):
            raise bad_call("__init__", _INIT_SIGNATURE, (self, *args), kwargs)
        self._t, self._dtype = _convert(val, dtype)

    # -- what it is ------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self._t.shape)

    @property
    def dtype(self) -> Dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return self._t.dim()

    @property
    def size(self) -> int:
        return self._t.numel()

    @property
    def itemsize(self) -> int:
        return self._dtype.size

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.size

    @property
    def T(self) -> array:
        return _wrap(self._t.permute(tuple(reversed(range(self.ndim)))), self._dtype)

    @property
    def at(self) -> ArrayAt:
        return ArrayAt._of(self, _NO_INDEX)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() 0-dimensional array.")
        return self.shape[0]

    def __iter__(self) -> ArrayIterator:
        if self.ndim == 0:
            raise TypeError("iter() 0-dimensional array.")
        return ArrayIterator._of(_wrap(self._t, self._dtype), 0)

    __hash__ = object.__hash__

    # -- reading values (these evaluate) --------------------------------------------------
    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = np.asarray(numpy_of(self)) if dtype is None else numpy_of(self).astype(dtype)
        return np.array(a, copy=True) if copy else a  # (NumPy asks a copy of `np.array(x)`)

    def item(self):
        if self.size != 1:
            raise ValueError("[convert] Only length-1 arrays can be converted to Python scalars.")
        return numpy_of(self).reshape(()).item()

    def tolist(self):
        a = numpy_of(self)
        if a.dtype.kind == "f" and a.dtype.itemsize < 4 or a.dtype.name == "bfloat16":
            a = a.astype(np.float32)
        return a.tolist()

    def __bool__(self) -> bool:
        return bool(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __index__(self) -> int:
        if self._dtype.kind not in "iu" or self.ndim:  # (MLX: no bool, no size-1 vector)
            raise TypeError("Only 0-dimensional integer arrays can be converted to an index.")
        return int(self.item())

    def __repr__(self) -> str:
        from ._printing import array_repr
        return array_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        # (MLX's: a 0-d array formats as its item, `f"{loss}"` printing 3.5; any other
        # prints its repr, and refuses a format spec)
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to mx.array.__format__")
        return repr(self)

    # -- conversion -------------------------------------------------------------------------
    def astype(self, dtype: Dtype, stream=None) -> array:
        return _wrap(cast(self._t, self._dtype, dtype), dtype)

    # -- indexing ---------------------------------------------------------------------------
    def __getitem__(self, idx) -> array:
        index, flips = index_of(idx, self._t.shape)
        if index.__class__ is tuple:  # (a read only: MLX's writes select with an int first)
            index = ints_among_arrays(index)
        t = (E.flip(self._t, flips) if flips else self._t)[index]
        # (MLX reads one int as a gather, a copy: `as_strided` sees it row-contiguous)
        return _wrap(t.contiguous() if idx.__class__ is int else t, self._dtype)

    def __setitem__(self, idx, value) -> None:
        if value is None:
            raise bad_call("__setitem__", SETITEM_SIGNATURE, (self, idx, value))
        v = to_array(value, self._dtype)
        if idx is Ellipsis or idx is None:  # (MLX: the value broadcast, in its own dtype)
            self._t = fit(v._t, tuple(self._t.shape)).clone()
            self._dtype = v._dtype
            return
        if isinstance(idx, array) and idx._dtype is D.bool_:  # (a mask: MLX's masked scatter)
            self._t = masked_write(self._t, idx._t, cast(v._t, v._dtype, self._dtype))
            return
        index, flips = index_of(idx, self._t.shape, "scatter")
        t = E.flip(self._t, flips) if flips else self._t.clone()
        vt = cast(v._t, v._dtype, self._dtype)
        try:
            t[index] = vt  # (ember drops an update's leading length-1 axes, as MLX does)
        except RuntimeError:  # (MLX's error, or its broadcast where ember's differs)
            t[index] = fit(vt, tuple(t[index].shape), kept_shape(self.shape, idx))
        self._t = E.flip(t, flips) if flips else t

    # -- operators --------------------------------------------------------------------------
    def __add__(self, o):
        check_operand(self, o, "__add__", "addition")
        return binary(E.add, self, o)

    def __radd__(self, o):
        check_operand(self, o, "__radd__", "addition")
        return binary(E.add, o, self)

    def __sub__(self, o):
        check_operand(self, o, "__sub__", "subtraction")
        return binary(E.sub, self, o)

    def __rsub__(self, o):
        check_operand(self, o, "__rsub__", "subtraction")
        return binary(E.sub, o, self)

    def __mul__(self, o):
        check_operand(self, o, "__mul__", "multiplication")
        return binary(E.mul, self, o)

    def __rmul__(self, o):
        check_operand(self, o, "__rmul__", "multiplication")
        return binary(E.mul, o, self)

    def __truediv__(self, o):
        check_operand(self, o, "__truediv__", "division")
        return divide(self, o)

    def __rtruediv__(self, o):
        check_operand(self, o, "__rtruediv__", "division")
        return divide(o, self)

    def __floordiv__(self, o):
        check_operand(self, o, "__floordiv__", "floor division")
        return binary(mlx_floor_divide, self, o)

    def __rfloordiv__(self, o):
        check_operand(self, o, "__rfloordiv__", "floor division")
        return binary(mlx_floor_divide, o, self)

    def __mod__(self, o):
        check_operand(self, o, "__mod__", "modulus")
        return binary(mlx_remainder, self, o)

    def __rmod__(self, o):
        check_operand(self, o, "__rmod__", "modulus")
        return binary(mlx_remainder, o, self)

    def __pow__(self, o):
        check_operand(self, o, "__pow__", "power")
        return binary(mlx_power, self, o)

    def __rpow__(self, o):
        check_operand(self, o, "__rpow__", "power")
        return binary(mlx_power, o, self)

    def __matmul__(self, o):
        from ._ops import matmul
        if not isinstance(o, array):
            raise bad_call("__matmul__", "__matmul__(self, other: mlx.core.array) -> "
                           "mlx.core.array", (self, o))
        return matmul(self, o)

    def __rmatmul__(self, o):
        from ._ops import matmul
        return matmul(o, self)

    # (no reflected `&`, `|`, `^`: MLX's array has none, so `True & x` is Python's TypeError)
    def __and__(self, o):
        check_operand(self, o, "__and__", "bitwise and")
        return bitwise(E.bitwise_and, self, o, "bitwise and")

    def __or__(self, o):
        check_operand(self, o, "__or__", "bitwise or")
        return bitwise(E.bitwise_or, self, o, "bitwise or")

    def __xor__(self, o):
        check_operand(self, o, "__xor__", "bitwise xor")
        return bitwise(E.bitwise_xor, self, o, "bitwise xor")

    def __lshift__(self, o):
        check_operand(self, o, "__lshift__", "left shift")
        return bitwise(E.bitwise_left_shift, self, o, "left shift")

    def __rshift__(self, o):
        check_operand(self, o, "__rshift__", "right shift")
        return bitwise(E.bitwise_right_shift, self, o, "right shift")

    def __eq__(self, o):
        if not comparable(self, o, "__eq__"):
            return False
        return compare(E.eq, self, o)

    def __ne__(self, o):
        if not comparable(self, o, "__ne__"):
            return True
        return compare(E.ne, self, o)

    def __lt__(self, o):
        check_operand(self, o, "__lt__", "less than")
        return compare(E.lt, self, o)

    def __le__(self, o):
        check_operand(self, o, "__le__", "less than or equal")
        return compare(E.le, self, o)

    def __gt__(self, o):
        check_operand(self, o, "__gt__", "greater than")
        return compare(E.gt, self, o)

    def __ge__(self, o):
        check_operand(self, o, "__ge__", "greater than or equal")
        return compare(E.ge, self, o)

    def __neg__(self):
        if self._dtype is D.bool_:
            raise ValueError("[negative] Not supported for bool, use logical_not instead.")
        return wrap_result(E.neg(self._t), self._dtype)

    def __pos__(self):
        return self

    def __abs__(self):
        from ._ops import abs as _abs
        return _abs(self)

    def __invert__(self):
        if self._dtype is D.bool_:
            return _wrap(E.logical_not(self._t), D.bool_)
        if self._dtype.kind not in "iu":  # (the operator's words, not bitwise_invert's)
            raise ValueError("Floating point types not allowed with bitwise inversion.")
        return _wrap(E.bitwise_not(self._t), self._dtype)

    # in-place operators rebind the object to the new value, as MLX's do
    def __iadd__(self, o):
        check_operand(self, o, "__iadd__", "inplace addition")
        return self._rebind(self + o)

    def __isub__(self, o):
        check_operand(self, o, "__isub__", "inplace subtraction")
        return self._rebind(self - o)

    def __imul__(self, o):
        check_operand(self, o, "__imul__", "inplace multiplication")
        return self._rebind(self * o)

    def __itruediv__(self, o):
        check_operand(self, o, "__itruediv__", "inplace division")
        return self._rebind(self / o)

    def _rebind(self, new: array) -> array:
        self._t, self._dtype = new._t, new._dtype
        return self


_NO_INDEX = object()  # `x.at` before `[idx]`


class ArrayAt:
    """`x.at[idx]`: updates that accumulate at repeated indices (`x.at[i].add(v)`). As in
    MLX, `[idx]` sets the index of this object too, and a second `[idx]` replaces it."""

    __slots__ = ("_x", "_idx")

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("mlx.core.ArrayAt: no constructor defined!")

    @classmethod
    def _of(cls, x: array, idx) -> ArrayAt:
        at = _new(cls)
        at._x, at._idx = x, idx
        return at

    def __getitem__(self, idx) -> ArrayAt:
        self._idx = idx  # (MLX's sets the index on itself too, and returns a copy)
        return ArrayAt._of(self._x, idx)

    def _check_indices(self) -> None:
        if self._idx is _NO_INDEX:
            raise ValueError("Must give indices to array.at (e.g. `x.at[0].add(4)`).")

    def _update(self, value, combine: str) -> array:
        """MLX's `x.at[idx].<combine>(value)`: the value read next to x (`to_array`),
        negated for "subtract", its reciprocal for "divide" (in its own dtype), then cast to
        x's dtype and combined at each position it reaches, repeated ones included; the
        result keeps x's dtype. With no index at all (`...`, None) MLX applies the op
        itself, which promotes."""
        self._check_indices()
        if value is None:
            raise bad_call(combine, f"{combine}(self, value: {_OPERAND_TYPES}) -> "
                           "mlx.core.array", (self, value))
        from . import _ops as O
        x, idx = self._x, self._idx
        v = to_array(value, x._dtype)
        if idx is Ellipsis or idx is None:
            op = {"add": O.add, "subtract": O.subtract, "multiply": O.multiply,
                  "divide": O.divide_, "maximum": O.maximum, "minimum": O.minimum}[combine]
            return op(x, v)
        if combine == "subtract":
            v = -v
        elif combine == "divide":
            v = O.reciprocal(v)
        dt = x._dtype
        index, flips = index_of(idx, x._t.shape, "scatter")
        positions = E.arange(x.size).reshape(x._t.shape)
        positions = (E.flip(positions, flips) if flips else positions)[index]
        shape = tuple(positions.shape)
        vals = fit(cast(v._t, v._dtype, dt), shape, kept_shape(x.shape, idx)).reshape(-1)
        t = x._t
        if dt is D.bool_:  # (in integers, where a sum or max of bools is their `or`, a
            t, vals = t.to(E.int32), vals.to(E.int32)  # product or min their `and`)
        flat, positions = t.reshape(-1), positions.reshape(-1)
        if combine in ("add", "subtract"):
            flat = flat.index_put((positions,), vals, accumulate=True)
        else:
            reduce = {"maximum": "amax", "minimum": "amin"}.get(combine, "prod")
            flat = flat.scatter_reduce(0, positions, vals, reduce=reduce)
        out = flat.reshape(x._t.shape)
        return _wrap(out != 0, dt) if dt is D.bool_ else wrap_result(out, dt)

    def add(self, value) -> array:
        return self._update(value, "add")

    def subtract(self, value) -> array:
        return self._update(value, "subtract")

    def multiply(self, value) -> array:
        return self._update(value, "multiply")

    def divide(self, value) -> array:
        return self._update(value, "divide")

    def maximum(self, value) -> array:
        return self._update(value, "maximum")

    def minimum(self, value) -> array:
        return self._update(value, "minimum")


_At = ArrayAt  # (the name `_methods` wraps the update methods under)


class ArrayIterator:
    """`iter(x)`: x's rows, from the value x had when the iterator was made (assigning into
    x later does not change them); `iter()` of it goes on from where it is, as a copy."""

    __slots__ = ("_x", "_i")

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("mlx.core.ArrayIterator: no constructor defined!")

    @classmethod
    def _of(cls, x: array, i: int) -> ArrayIterator:
        it = _new(cls)
        it._x, it._i = x, i
        return it

    def __iter__(self) -> ArrayIterator:
        return ArrayIterator._of(self._x, self._i)

    def __next__(self) -> array:
        i = self._i
        if i >= self._x.shape[0]:
            raise StopIteration
        self._i = i + 1
        return self._x[i]


class ArrayLike:
    """Any Python object which has an `__mlx_array__` method that returns an array (MLX's
    name for the type). `mx.array`, the operators, `.at` updates and every op's array
    operands (`as_array`) take such an object as its array."""

    __slots__ = ("_obj",)

    def __init__(self, *args, **kwargs) -> None:
        if len(args) != 1 or kwargs or args[0] is None:
            raise bad_call("__init__", "__init__(self, arg: object, /) -> None",
                           (self, *args), kwargs)
        self._obj = args[0]


ArrayAt.__module__ = ArrayIterator.__module__ = ArrayLike.__module__ = "mlx.core"


# -- making arrays --------------------------------------------------------------------------

def _wrap(t: Tensor, dtype: Dtype | None = None) -> array:
    """An array of tensor `t` (already in `dtype`'s carrier)."""
    a = _new(array)
    a._t = t
    a._dtype = dtype if dtype is not None else D.from_ember(t.dtype)
    return a


def wrap_result(t: Tensor, dtype: Dtype) -> array:
    """An array of an op's result `t`, brought into `dtype`'s range (see `_dtypes`)."""
    if dtype.wraps and dtype is not D.uint64:
        t = E.bitwise_and(t, (1 << dtype.bits) - 1)
    return _wrap(t, dtype)


def _to_carrier(a: np.ndarray, dtype: Dtype) -> np.ndarray:
    if a.dtype.kind == "c" and dtype.kind != "c":
        a = a.real  # (a complex value cast to a real type keeps its real part, as in MLX)
    if dtype is D.uint64:  # (what the C casts give)
        return D.c_cast(a, np.dtype(np.uint64)).view(np.int64)
    return D.c_cast(a, dtype.carrier.np)


def array_from_numpy(a: np.ndarray, dtype: Dtype | None = None) -> array:
    """An array of NumPy array `a`'s values (copied), in `dtype` or in `a`'s own dtype."""
    a = np.asarray(a)
    dt = dtype if dtype is not None else D.from_numpy(a.dtype)
    return _wrap(E.tensor(_to_carrier(a, dt)), dt)


def numpy_of(x) -> np.ndarray:
    """The values of array `x` (or of a Python number or list) as a NumPy array in the
    array's own dtype."""
    if not isinstance(x, array):
        x = array(x)
    check_readable(x._t)
    a = x._t.detach().numpy()
    if x._dtype is D.uint64:
        return a.view(np.uint64)
    if x._dtype.wraps:
        return a.astype(x._dtype.np)
    return a


_INIT_SIGNATURE = ("__init__(self: array, val: scalar | list | tuple | DLPackCompatible | array, "
                   "dtype: Dtype | None = None)")


def _init_arguments(val, dtype=None) -> tuple:
    return val, dtype


_INT64 = (-(2**63), 2**63)  # MLX reads a Python int as a C int64 (outside: std::bad_cast)


def _python_int(v: int) -> int:
    if not _INT64[0] <= v < _INT64[1]:
        raise RuntimeError("std::bad_cast")
    return v


def _python_dtype(v) -> Dtype:
    if isinstance(v, bool):
        return D.bool_
    if isinstance(v, int):
        return D.int32 if -(2**31) <= _python_int(v) < 2**31 else D.int64
    return D.float32 if isinstance(v, float) else D.complex64


def _numeric_numpy(v) -> bool:
    """Whether `v` is a NumPy array or scalar of numbers in native byte order (what MLX's
    bindings take as an ndarray; np.float64 is also a Python float)."""
    return isinstance(v, _NUMPY) and v.dtype.kind in "biufc" and v.dtype.isnative


_BUFFERS = (bytes, bytearray, memoryview)  # (read as uint8 through the buffer protocol)
_NUMPY = (np.ndarray, np.generic)
_NUMPY_OR_BUFFER = (*_NUMPY, *_BUFFERS)
_SEQUENCES = (list, tuple)


def _convert(val, dtype: Dtype | None) -> tuple:
    """(tensor, dtype) of `mx.array(val, dtype)`, in the order MLX tries the kinds of
    value, refusing what it refuses with its messages."""
    if isinstance(val, array):
        t, dt = val._t, val._dtype
        if dtype is not None and dtype is not dt:
            t, dt = cast(t, dt, dtype), dtype
        return t, dt
    if isinstance(val, _NUMPY_OR_BUFFER):
        a = np.asarray(memoryview(val)) if isinstance(val, _BUFFERS) else np.asarray(val)
        if a.dtype.kind not in "biufc" or not a.dtype.isnative:  # (MLX: no byte swaps)
            raise RuntimeError("std::bad_cast")
        if a.size and min(a.strides, default=0) < 0:  # (MLX reads NumPy data by DLPack)
            raise ValueError("Cannot convert DLPack arrays with negative strides to mlx array.")
        dt = dtype
        if dt is None:
            dt = D.float32 if a.dtype == np.float64 else D.from_numpy(a.dtype)
        return E.tensor(_to_carrier(a, dt)), dt
    if isinstance(val, Tensor):
        t = val.detach()
        dt = D.from_ember(t.dtype)
        return (t, dt) if dtype is None else (cast(t, dt, dtype), dtype)
    if isinstance(val, _NUMBER_CLASSES):
        default = _python_dtype(val)  # (an int past int64 is refused whatever the dtype)
        dt = dtype if dtype is not None else default
        return E.tensor(_to_carrier(np.array(val), dt)), dt
    if isinstance(val, _SEQUENCES):
        return convert_list(val, dtype)
    if hasattr(val, "__mlx_array__"):
        return _convert(_accessed(val), dtype)
    raise ValueError(f"Invalid type {type_name(val)} received in array initialization.")


def _accessed(obj) -> array:
    """The array an object's `__mlx_array__` gives (anything else: MLX's failed cast)."""
    a = obj.__mlx_array__()
    if not isinstance(a, array):
        raise RuntimeError("std::bad_cast")
    return a


def as_array(x) -> array:
    """`x` itself if it is an array, else `mx.array(x)` (the one conversion every op's
    array operands go through, so an object with `__mlx_array__` is taken too); a list or
    tuple is refused, as MLX's `scalar | array` parameters refuse it."""
    if isinstance(x, array):
        return x
    if isinstance(x, list | tuple) or isinstance(x, _NUMPY) and not _numeric_numpy(x):
        raise ValueError(f"Invalid type {type_name(x)} received in array initialization.")
    return array(x)


def cast(t: Tensor, src: Dtype, dst: Dtype) -> Tensor:
    """Tensor `t` (values of MLX dtype `src`) converted to MLX dtype `dst`, in its carrier."""
    if src is dst:
        return t
    if src.kind == "c" and dst.kind in "iuf":
        t = E.real(t)  # (the real part, as MLX casts; torch would warn)
    if dst.kind == "u" and dst.wraps:
        t = t.to(E.int64) if t.dtype is not E.int64 else t
        if dst is not D.uint64:
            t = E.bitwise_and(t, (1 << dst.bits) - 1)
        return t if t.dtype is dst.carrier else t.to(dst.carrier)
    if src is D.uint64 and dst.kind in "fc":
        wide = t.to(E.float64)
        return E.where(t < 0, wide + 2.0**64, wide).to(dst.carrier)
    return t.to(dst.carrier)


# the operators above read their operands by the rules of `_operands`, which makes arrays
# (`operands` and `complex_order` are imported from here by the ops' modules)
from ._operands import (  # noqa: E402, F401  (it imports `array` from this module)
    _NUMBER_CLASSES,
    _OPERAND_TYPES,
    binary,
    bitwise,
    check_operand,
    comparable,
    compare,
    complex_order,
    divide,
    operands,
    to_array,
)
