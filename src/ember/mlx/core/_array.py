"""`mx.array`: MLX's array over an ember tensor.

An array holds an ember `Tensor` (`_t`, in its dtype's carrier: see `_dtypes`) and its
MLX dtype. Every op binds ember's primitives on `_t`, so ember's transforms (`grad`,
`vjp`, `jvp`, `vmap`) and its compiler see MLX programs as they see PyTorch ones.
Arrays are values: no op writes into a tensor another array holds. `x[i] = v` gives `x`
a new tensor (other names bound to the same `array` object see the change, slices taken
earlier do not), which is MLX's behaviour (its slices copy).
"""

from __future__ import annotations

import numbers

import numpy as np

import ember as E

from ... import _tensor
from . import _dtypes as D
from ._binding import bad_call
from ._dtypes import Dtype

Tensor = _tensor.Tensor
_new = object.__new__


class array:
    """An MLX array (see the module docstring)."""

    __slots__ = ("_t", "_dtype", "__weakref__")
    __array_priority__ = 100

    def __init__(self, val, dtype: Dtype | None = None) -> None:
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
        return _wrap(self._t.permute(*reversed(range(self.ndim))), self._dtype)

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
        a = np.asarray(numpy_of(self))
        return a if dtype is None else a.astype(dtype)

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
        if self._dtype.kind not in "biu":
            raise TypeError("only integer arrays can be converted to an index")
        return int(self.item())

    def __repr__(self) -> str:
        from ._printing import array_repr
        return array_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self.size == 1 and spec:
            return format(self.item(), spec)
        return repr(self)

    # -- conversion -------------------------------------------------------------------------
    def astype(self, dtype: Dtype, stream=None) -> array:
        return _wrap(cast(self._t, self._dtype, dtype), dtype)

    # -- indexing ---------------------------------------------------------------------------
    def __getitem__(self, idx) -> array:
        return _wrap(self._t[_index(idx)], self._dtype)

    def __setitem__(self, idx, value) -> None:
        v = value if isinstance(value, array) else array(value, self._dtype)
        t = self._t.clone()
        t[_index(idx)] = cast(v._t, v._dtype, self._dtype)
        self._t = t

    # -- operators --------------------------------------------------------------------------
    def __add__(self, o):
        return binary(E.add, self, o)

    def __radd__(self, o):
        return binary(E.add, o, self)

    def __sub__(self, o):
        return binary(E.sub, self, o)

    def __rsub__(self, o):
        return binary(E.sub, o, self)

    def __mul__(self, o):
        return binary(E.mul, self, o)

    def __rmul__(self, o):
        return binary(E.mul, o, self)

    def __truediv__(self, o):
        return divide(self, o)

    def __rtruediv__(self, o):
        return divide(o, self)

    def __floordiv__(self, o):
        return binary(E.floor_divide, self, o)

    def __rfloordiv__(self, o):
        return binary(E.floor_divide, o, self)

    def __mod__(self, o):
        return binary(mlx_remainder, self, o)

    def __rmod__(self, o):
        return binary(mlx_remainder, o, self)

    def __pow__(self, o):
        return binary(E.pow, self, o)

    def __rpow__(self, o):
        return binary(E.pow, o, self)

    def __matmul__(self, o):
        from ._ops import matmul
        return matmul(self, o)

    def __rmatmul__(self, o):
        from ._ops import matmul
        return matmul(o, self)

    def __and__(self, o):
        return binary(E.bitwise_and, self, o)

    def __rand__(self, o):
        return binary(E.bitwise_and, o, self)

    def __or__(self, o):
        return binary(E.bitwise_or, self, o)

    def __ror__(self, o):
        return binary(E.bitwise_or, o, self)

    def __xor__(self, o):
        return binary(E.bitwise_xor, self, o)

    def __rxor__(self, o):
        return binary(E.bitwise_xor, o, self)

    def __lshift__(self, o):
        return binary(E.bitwise_left_shift, self, o)

    def __rshift__(self, o):
        return binary(E.bitwise_right_shift, self, o)

    def __eq__(self, o):
        return compare(E.eq, self, o)

    def __ne__(self, o):
        return compare(E.ne, self, o)

    def __lt__(self, o):
        return compare(E.lt, self, o)

    def __le__(self, o):
        return compare(E.le, self, o)

    def __gt__(self, o):
        return compare(E.gt, self, o)

    def __ge__(self, o):
        return compare(E.ge, self, o)

    def __neg__(self):
        if self._dtype is D.bool_:
            raise ValueError("[negative] Not supported for bool, use logical_not instead.")
        return _wrap(E.neg(self._t), self._dtype)

    def __pos__(self):
        return self

    def __abs__(self):
        from ._ops import abs as _abs
        return _abs(self)

    def __invert__(self):
        if self._dtype is D.bool_:
            return _wrap(E.logical_not(self._t), D.bool_)
        if self._dtype.kind not in "iu":
            raise ValueError("[bitwise_invert] Bitwise inverse only allowed on integer types.")
        return _wrap(E.bitwise_not(self._t), self._dtype)

    # in-place operators rebind the object to the new value, as MLX's do
    def __iadd__(self, o):
        return self._rebind(self + o)

    def __isub__(self, o):
        return self._rebind(self - o)

    def __imul__(self, o):
        return self._rebind(self * o)

    def __itruediv__(self, o):
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

    def _scatter(self, value, combine: str) -> array:
        self._check_indices()
        x = self._x
        v = value if isinstance(value, array) else array(value, x._dtype)
        dt = D.promote_types(x._dtype, v._dtype) if combine != "set" else x._dtype
        t = cast(x._t, x._dtype, dt).clone()
        vt = cast(v._t, v._dtype, dt)
        idx = _index(self._idx)
        if combine == "set":
            t[idx] = vt
            return _wrap(t, dt)
        if combine == "add" or combine == "subtract":
            vt = vt if combine == "add" else E.neg(vt)
            # index_put with accumulate sums at repeated indices; a basic index has none
            positions = E.arange(t.numel()).reshape(t.shape)[idx]
            flat = t.reshape(-1).index_put((positions.reshape(-1),),
                                           E.broadcast_to(vt, positions.shape).reshape(-1),
                                           accumulate=True)
            return _wrap(flat.reshape(t.shape), dt)
        positions = E.arange(t.numel()).reshape(t.shape)[idx].reshape(-1)
        vals = E.broadcast_to(vt, E.arange(t.numel()).reshape(t.shape)[idx].shape).reshape(-1)
        reduce = {"multiply": "prod", "maximum": "amax", "minimum": "amin"}[combine]
        flat = t.reshape(-1).scatter_reduce(0, positions, vals, reduce=reduce)
        return _wrap(flat.reshape(t.shape), dt)

    def add(self, value) -> array:
        return self._scatter(value, "add")

    def subtract(self, value) -> array:
        return self._scatter(value, "subtract")

    def multiply(self, value) -> array:
        return self._scatter(value, "multiply")

    def maximum(self, value) -> array:
        return self._scatter(value, "maximum")

    def minimum(self, value) -> array:
        return self._scatter(value, "minimum")

    def divide(self, value) -> array:
        from ._ops import reciprocal
        self._check_indices()
        v = value if isinstance(value, array) else array(value, self._x._dtype)
        return self._scatter(reciprocal(v), "multiply")


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
    name for the type; ember's ops do not take one yet)."""

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
    if dtype is D.uint64:
        return np.array(a, dtype=np.uint64).view(np.int64)
    return a.astype(dtype.carrier.np, copy=False)


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
    a = x._t.detach().numpy()
    if x._dtype is D.uint64:
        return a.view(np.uint64)
    if x._dtype.wraps:
        return a.astype(x._dtype.np)
    return a


def _python_dtype(v) -> Dtype:
    if isinstance(v, bool):
        return D.bool_
    if isinstance(v, numbers.Integral):
        return D.int32 if -(2**31) <= v < 2**31 else D.int64
    if isinstance(v, numbers.Real):
        return D.float32
    if isinstance(v, numbers.Complex):
        return D.complex64
    raise ValueError(f"Invalid type {type(v).__name__} received in array initialization.")


def _convert(val, dtype: Dtype | None) -> tuple:
    if isinstance(val, array):
        t, dt = val._t, val._dtype
        if dtype is not None and dtype is not dt:
            t, dt = cast(t, dt, dtype), dtype
        return t, dt
    if isinstance(val, np.ndarray | np.generic):
        a = np.asarray(val)
        dt = dtype
        if dt is None:
            dt = D.float32 if a.dtype == np.float64 else D.from_numpy(a.dtype)
        return E.tensor(_to_carrier(a, dt)), dt
    if isinstance(val, Tensor):
        t = val.detach()
        dt = D.from_ember(t.dtype)
        return (t, dt) if dtype is None else (cast(t, dt, dtype), dtype)
    if isinstance(val, list | tuple):
        if any(isinstance(v, array) for v in _leaves(val)):
            from ._ops import stack
            parts = [array(v) for v in val]
            out = stack(parts) if parts else array(np.zeros((0,), np.float32))
            return _convert(out, dtype)
        a = np.array(val)
        if a.dtype == object:
            raise ValueError("Initialization encountered non-uniform length.")
        inferred = {"b": D.bool_, "f": D.float32, "c": D.complex64}.get(a.dtype.kind)
        if inferred is None:
            ok = a.size == 0 or (a.min() >= -(2**31) and a.max() < 2**31)
            inferred = D.int32 if ok else D.int64
            if a.size == 0:
                inferred = D.float32
        dt = dtype if dtype is not None else inferred
        return E.tensor(_to_carrier(a, dt)), dt
    if isinstance(val, numbers.Number):
        dt = dtype if dtype is not None else _python_dtype(val)
        return E.tensor(_to_carrier(np.array(val), dt)), dt
    raise ValueError(f"Cannot convert {type(val).__name__} to an mlx array.")


def _leaves(val):
    for v in val:
        if isinstance(v, list | tuple):
            yield from _leaves(v)
        else:
            yield v


def cast(t: Tensor, src: Dtype, dst: Dtype) -> Tensor:
    """Tensor `t` (values of MLX dtype `src`) converted to MLX dtype `dst`, in its carrier."""
    if src is dst:
        return t
    if dst.kind == "u" and dst.wraps:
        t = t.to(E.int64) if t.dtype is not E.int64 else t
        if dst is not D.uint64:
            t = E.bitwise_and(t, (1 << dst.bits) - 1)
        return t if t.dtype is dst.carrier else t.to(dst.carrier)
    if src is D.uint64 and dst.kind in "fc":
        wide = t.to(E.float64)
        return E.where(t < 0, wide + 2.0**64, wide).to(dst.carrier)
    return t.to(dst.carrier)


# -- operands and the ops every operator shares ---------------------------------------------

def _check_scalar(v, dtype: Dtype) -> None:
    """MLX refuses a Python int that the array's integer type cannot hold."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or dtype.kind not in "iu":
        return
    info = np.iinfo(dtype.np)
    if not info.min <= v <= info.max:
        raise ValueError(f"Converting {v} to {dtype.name} would result in overflow.")


def _scalar_dtype(v, other: Dtype) -> Dtype:
    """The dtype a weak Python scalar takes next to an array of dtype `other`."""
    if isinstance(v, bool):
        return other
    if isinstance(v, numbers.Integral):
        if other is D.bool_:
            return D.int32
        _check_scalar(v, other)
        return other
    if isinstance(v, numbers.Real):
        return other if other.kind in "fc" else D.float32
    if isinstance(v, numbers.Complex):
        return D.complex64
    raise TypeError(f"unsupported operand type: {type(v).__name__}")


def operands(a, b, floating: bool = False, numbers: bool = False) -> tuple:
    """(ta, tb, dtype): both operands as tensors in the carrier of their MLX promotion (a
    Python scalar is weak: it takes the array's dtype where its kind allows). `floating`
    lifts integer results to float32 (true division). With `numbers`, a Python number
    next to a float32/float64 array stays a number (see `_NUMBER_DTYPES`)."""
    a_arr, b_arr = isinstance(a, array), isinstance(b, array)
    if not a_arr and (not _is_scalar(a) or not b_arr and _is_scalar(b)):
        a, a_arr = array(a), True
    if not b_arr and not _is_scalar(b):
        b, b_arr = array(b), True
    if a_arr and b_arr:
        dt = D.promote_types(a._dtype, b._dtype)
    elif a_arr:
        dt = _scalar_dtype(b, a._dtype)
    else:
        dt = _scalar_dtype(a, b._dtype)
    if floating and dt.kind not in "fc":
        dt = D.float32
    if numbers and dt in _NUMBER_DTYPES:
        return _number_operand(a, dt), _number_operand(b, dt), dt
    return _operand(a, dt), _operand(b, dt), dt


# (ember takes a Python number next to a tensor of these dtypes as the dtype's own value,
# as MLX does: no 0-d tensor to make, and in a recorded graph it is a scalar argument)
_NUMBER_DTYPES = (D.float32, D.float64)
_NUMBER_OPS = (E.add, E.sub, E.mul)


def _number_operand(v, dt: Dtype):
    if v.__class__ is float or v.__class__ is int and -(1 << 24) <= v <= 1 << 24:
        return v
    return _operand(v, dt)


def _is_scalar(v) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, np.ndarray)


def _operand(v, dt: Dtype) -> Tensor:
    if isinstance(v, array):
        return cast(v._t, v._dtype, dt)
    if isinstance(v, np.generic):
        v = v.item()
    return E.tensor(v, dtype=dt.carrier)


def mlx_remainder(ta: Tensor, tb: Tensor) -> Tensor:
    """MLX's `%`: C's fmod moved onto the divisor's side when the signs differ, so a zero
    keeps fmod's sign (`-4.0 % 2` is -0.0, where PyTorch's floor-based one gives 0.0)."""
    if not ta.dtype.is_floating_point:
        return E.remainder(ta, tb)
    r = E.fmod(ta, tb)
    return E.where((r != 0) & ((r < 0) != (tb < 0)), r + tb, r)


def binary(fn, a, b, numbers: bool = False) -> array:
    """`fn` on MLX-promoted operands; the result in the promoted dtype. `fn` takes a
    Python number as an operand where it is one of `_NUMBER_OPS` or `numbers` says so."""
    ta, tb, dt = operands(a, b, numbers=numbers or fn in _NUMBER_OPS)
    if dt is D.bool_ and fn in (E.add, E.mul):
        fn = E.logical_or if fn is E.add else E.logical_and
    return wrap_result(fn(ta, tb), dt)


def divide(a, b) -> array:
    ta, tb, dt = operands(a, b, floating=True)
    return _wrap(E.div(ta, tb), dt)


def compare(fn, a, b) -> array:
    ta, tb, _ = operands(a, b)
    return _wrap(fn(ta, tb), D.bool_)


# -- indices --------------------------------------------------------------------------------

def _index(idx):
    """An MLX index as ember's: arrays become tensors; boolean masks are refused."""
    if isinstance(idx, tuple):
        return tuple(_index_part(i) for i in idx)
    return _index_part(idx)


def _index_part(i):
    if isinstance(i, array):
        if i._dtype is D.bool_:
            raise ValueError("boolean indices are not yet supported")
        return i._t
    if isinstance(i, list):
        return _index_part(array(i))
    if isinstance(i, np.ndarray):
        return _index_part(array(i))
    return i
