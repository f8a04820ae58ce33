"""MLX's dtypes and its promotion rules, over ember's dtypes.

MLX has three unsigned types ember's tensors lack (uint16, uint32, uint64). An array of
one of those keeps its values in a wider signed *carrier* (int32, int64, int64) and its
MLX dtype beside it; results are wrapped back into the type's range after arithmetic, so
`uint32(1) - 3` is 4294967294 as in MLX. (uint64 keeps its bits in int64: sums and
products wrap the same way, printing and conversion reinterpret the bits.)
"""

from __future__ import annotations

import enum

import ml_dtypes
import numpy as np

from ... import _dtype as _e


class DtypeCategory(enum.Enum):
    """MLX's abstract dtype categories, for `issubdtype`."""

    complexfloating = 0
    floating = 1
    inexact = 2
    signedinteger = 3
    unsignedinteger = 4
    integer = 5
    number = 6
    generic = 7

    def __repr__(self) -> str:
        return f"DtypeCategory.{self.name}"

    __str__ = __repr__


_PARENTS = {
    DtypeCategory.complexfloating: DtypeCategory.inexact,
    DtypeCategory.floating: DtypeCategory.inexact,
    DtypeCategory.inexact: DtypeCategory.number,
    DtypeCategory.signedinteger: DtypeCategory.integer,
    DtypeCategory.unsignedinteger: DtypeCategory.integer,
    DtypeCategory.integer: DtypeCategory.number,
    DtypeCategory.number: DtypeCategory.generic,
}


class Dtype:
    """An MLX element type (`mx.float32`); prints as `mlx.core.float32`."""

    __slots__ = ("name", "np", "size", "kind", "bits", "carrier", "category")

    def __init__(self, name: str, np_dtype, kind: str, carrier: _e.dtype,
                 category: DtypeCategory | None) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.size = self.np.itemsize
        self.bits = 8 * self.size
        self.kind = kind  # "b" bool, "u" unsigned, "i" signed, "f" floating, "c" complex
        self.carrier = carrier  # the ember dtype that holds the values
        self.category = category

    def __repr__(self) -> str:
        return f"mlx.core.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def wraps(self) -> bool:
        """Whether values live in a wider carrier and must be wrapped after arithmetic."""
        return self.kind == "u" and self.carrier is not _e.uint8


C = DtypeCategory
bool_ = Dtype("bool", np.bool_, "b", _e.bool_, C.generic)
uint8 = Dtype("uint8", np.uint8, "u", _e.uint8, C.unsignedinteger)
uint16 = Dtype("uint16", np.uint16, "u", _e.int32, C.unsignedinteger)
uint32 = Dtype("uint32", np.uint32, "u", _e.int64, C.unsignedinteger)
uint64 = Dtype("uint64", np.uint64, "u", _e.int64, C.unsignedinteger)
int8 = Dtype("int8", np.int8, "i", _e.int8, C.signedinteger)
int16 = Dtype("int16", np.int16, "i", _e.int16, C.signedinteger)
int32 = Dtype("int32", np.int32, "i", _e.int32, C.signedinteger)
int64 = Dtype("int64", np.int64, "i", _e.int64, C.signedinteger)
float16 = Dtype("float16", np.float16, "f", _e.float16, C.floating)
bfloat16 = Dtype("bfloat16", ml_dtypes.bfloat16, "f", _e.bfloat16, C.floating)
float32 = Dtype("float32", np.float32, "f", _e.float32, C.floating)
float64 = Dtype("float64", np.float64, "f", _e.float64, C.floating)
complex64 = Dtype("complex64", np.complex64, "c", _e.complex64, C.complexfloating)

ALL = (bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16,
       float32, float64, complex64)
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}
_BY_EMBER = {_e.bool_: bool_, _e.uint8: uint8, _e.int8: int8, _e.int16: int16,
             _e.int32: int32, _e.int64: int64, _e.float16: float16, _e.bfloat16: bfloat16,
             _e.float32: float32, _e.float64: float64, _e.complex64: complex64,
             _e.complex128: complex64}


def _by_name(name: str) -> Dtype:
    return _BY_NAME[name]


def from_numpy(d: np.dtype) -> Dtype:
    """The MLX dtype of a NumPy dtype as `mx.array(np_array)` keeps it (float64 is kept
    only when asked for explicitly: the caller narrows it)."""
    d = np.dtype(d)
    if d == np.complex128:
        return complex64
    try:
        return _BY_NP[d]
    except KeyError:
        raise ValueError(f"Cannot convert numpy array of type {d} to an mlx array") from None


def from_ember(d: _e.dtype) -> Dtype:
    return _BY_EMBER[d]


_WIDTH_SIGNED = {8: int8, 16: int16, 32: int32, 64: int64}
_WIDTH_UNSIGNED = {8: uint8, 16: uint16, 32: uint32, 64: uint64}


def promote_types(a: Dtype, b: Dtype) -> Dtype:
    """MLX's promotion of two array dtypes (checked against mlx 0.32.4's full table)."""
    if a is b:
        return a
    if a is bool_:
        return b
    if b is bool_:
        return a
    if "c" in (a.kind, b.kind):
        return complex64
    if a.kind == "f" or b.kind == "f":
        if a.kind != "f":
            return b
        if b.kind != "f":
            return a
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.bits >= b.bits else b
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    u, s = (a, b) if a.kind == "u" else (b, a)
    if u is uint64:
        return float32
    return _WIDTH_SIGNED[max(2 * u.bits, s.bits)]


def issubdtype(a, b) -> bool:
    """`mx.issubdtype`: a dtype or category within another."""
    if isinstance(a, Dtype) and isinstance(b, Dtype):
        return a is b
    if isinstance(b, Dtype):
        return False
    cat = a.category if isinstance(a, Dtype) else a
    while cat is not None:
        if cat is b:
            return True
        cat = _PARENTS.get(cat)
    return False


_F32 = np.dtype(np.float32)


def c_cast(a: np.ndarray, to: np.dtype) -> np.ndarray:
    """`a` converted to NumPy dtype `to` as MLX's C++ casts convert, whatever ml_dtypes'
    version: a 16-bit float is made from a float (a double rounds to float first, and can
    round differently than once), and bfloat16 converts to an integer through float (C's
    wrap-around, where ml_dtypes >= 0.7 gives 0 out of range)."""
    to = np.dtype(to)
    with np.errstate(invalid="ignore", over="ignore"):
        if to.itemsize == 2 and to.kind in "fV" and a.dtype.itemsize > 2 and a.dtype != _F32 \
                or a.dtype.kind == "V" and to.kind in "iu":
            a = a.astype(_F32)
        return a.astype(to, copy=False)
