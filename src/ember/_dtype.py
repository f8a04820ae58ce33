"""dtypes: the seventeen element types, PyTorch's promotion lattice, finfo / iinfo.

A `dtype` is a small immutable object naming a NumPy dtype (bfloat16 and the two float8
formats come from ml_dtypes). Promotion follows PyTorch, not NumPy: categories bool <
integer < floating < complex, and zero-dim tensors and Python scalars only raise the
category, never the width, of the result. The float8 types are storage formats: as in
PyTorch they promote with no other type. uint16 / uint32 / uint64 are PyTorch's newer
unsigned types: each promotes with itself and with floating and complex types only.
"""

from __future__ import annotations

import builtins
import math
import threading

import ml_dtypes
import numpy as np

from . import _names
from ._user_warnings import warn_at_user


class dtype:
    """An element type. Compare with `is` or `==`; print as `ember.float32`."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_rank", "_kind", "__weakref__")

    def __init__(self, name: str, np_dtype, rank: int, kind: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._kind = kind  # 0 bool, 1 integer, 2 floating, 3 complex
        self._rank = rank  # position in the promotion order within its kind
        self.is_floating_point = kind == 2
        self.is_complex = kind == 3
        self.is_signed = not name.startswith(("bool", "uint"))

    def __repr__(self) -> str:
        return f"{_names.prefix}.{self.name}"

    def __reduce__(self):
        return (_from_name, (self.name,))

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        # NOTE: PyTorch would give complex32 for half; ember has no complex32, so cfloat.
        return complex128 if self is float64 else (complex64 if self._kind == 2 else self)


bool_ = dtype("bool", np.bool_, 0, 0)
uint8 = dtype("uint8", np.uint8, 0, 1)
int8 = dtype("int8", np.int8, 1, 1)
int16 = dtype("int16", np.int16, 2, 1)
int32 = dtype("int32", np.int32, 3, 1)
int64 = dtype("int64", np.int64, 4, 1)
float16 = dtype("float16", np.float16, 0, 2)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 1, 2)
float32 = dtype("float32", np.float32, 2, 2)
float64 = dtype("float64", np.float64, 3, 2)
complex64 = dtype("complex64", np.complex64, 0, 3)
complex128 = dtype("complex128", np.complex128, 1, 3)
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, -1, 2)
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, -1, 2)
uint16 = dtype("uint16", np.uint16, -1, 1)
uint32 = dtype("uint32", np.uint32, -1, 1)
uint64 = dtype("uint64", np.uint64, -1, 1)

FLOAT8 = (float8_e4m3fn, float8_e5m2)
WIDE_UNSIGNED = (uint16, uint32, uint64)  # (no rank: no promotion among integers)
ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
       complex64, complex128, *FLOAT8, *WIDE_UNSIGNED)
BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}

# PyTorch's aliases.
ALIASES = {
    "float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
    "short": int16, "cfloat": complex64, "cdouble": complex128, "bool": bool_,
}


# Python's scalar types stand for dtypes wherever PyTorch takes one (`x.to(int)`).
_PY_TYPES = {bool: bool_, int: int64, float: float64, complex: complex128}


def as_dtype(d):
    """`d` itself, or the dtype a Python scalar type names (`int` is int64, `float` float64)."""
    return _PY_TYPES.get(d, d) if d.__class__ is type else d


def _from_name(name: str) -> dtype:
    return BY_NAME[name]


def from_numpy(np_dtype) -> dtype:
    """The ember dtype of a NumPy dtype; TypeError for one ember cannot hold."""
    d = _BY_NP.get(np.dtype(np_dtype))
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The "
            "only supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
            "uint64, uint32, uint16, uint8, and bool."
        )
    return d


# --- promotion -------------------------------------------------------------

def _promote_uncached(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a._kind != b._kind:
        hi, lo = (a, b) if a._kind > b._kind else (b, a)
        if hi._kind == 3 and lo is float64:
            return complex128
        return hi
    kind = a._kind
    if kind == 1:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a._rank > b._rank else b
    if kind == 2 and {a, b} == {float16, bfloat16}:
        return float32
    return a if a._rank > b._rank else b


def _promotes(a: dtype, b: dtype) -> bool:
    if a is b:
        return True
    if {a, b} & set(FLOAT8):
        return False
    return not ({a, b} & set(WIDE_UNSIGNED) and not (a._kind == 2 or b._kind == 2))


_PROMOTE = {(a, b): _promote_uncached(a, b) for a in ALL for b in ALL if _promotes(a, b)}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be cast to without losing category (PyTorch's table)."""
    out = _PROMOTE.get((type1, type2))
    if out is None:  # a float8 type with any other; a wide unsigned one with another integer
        kinds = "Float8 Types" if type1 in FLOAT8 or type2 in FLOAT8 else \
            "uint16, uint32, uint64 types"
        raise RuntimeError(f"Promotion for {kinds} is not supported, attempted to promote "
                           f"{SCALAR_TYPE_NAMES[type1.name]} and "
                           f"{SCALAR_TYPE_NAMES[type2.name]}")
    return out


# --- default dtype ---------------------------------------------------------

_default = threading.local()


def get_default_dtype() -> dtype:
    return getattr(_default, "dtype", float32)


def set_default_dtype(d: dtype) -> None:
    """The dtype float tensors get when none is given (float32, float64, float16 or bfloat16)."""
    if d not in (float32, float64, float16, bfloat16):
        # (PyTorch's words: a non-dtype object is "invalid", any other dtype not floating)
        prefix = "" if isinstance(d, dtype) else "invalid dtype object: "
        raise TypeError(f"{prefix}only floating-point types are supported as the default type")
    _default.dtype = d


def default_complex() -> dtype:
    return complex128 if get_default_dtype() is float64 else complex64


def scalar_dtype(value) -> dtype:
    """The dtype PyTorch gives a Python scalar standing alone (`tensor(2.5)`)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return get_default_dtype()
    if isinstance(value, complex):
        return default_complex()
    if isinstance(value, np.generic):
        return from_numpy(value.dtype)
    raise TypeError(f"expected a number, got {type(value).__name__}")


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Merge a higher-priority result with a lower-priority one (dim > zero-dim > scalar)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._kind == 3:
        return higher
    if lower._kind == 3:
        return higher.to_complex() if higher._kind == 2 else lower
    if higher._kind == 2:
        return higher
    if higher is bool_ or lower._kind == 2:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> dtype:
    """The dtype an elementwise op gives these tensors and scalars, by PyTorch's rules."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is not None:
            if x.ndim == 0:
                zero = d if zero is None else promote_types(zero, d)
            else:
                dim = d if dim is None else promote_types(dim, d)
        else:
            d = _wrapped_dtype(x)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    out = _combine(dim, _combine(zero, wrapped))
    if out is None:
        raise TypeError("result_type needs at least one tensor or number")
    return out


class OperandTypeError(TypeError):
    """An operand that is neither a Tensor nor a number. Raised in ember's words where it is
    met; a public op re-raises it in the argument parser's (`ops._arg_parser_text`). It is a
    TypeError, and is shown as one: the name a program prints is PyTorch's."""


OperandTypeError.__name__ = OperandTypeError.__qualname__ = "TypeError"
OperandTypeError.__module__ = "builtins"


def py_number(x):
    """A NumPy scalar as the Python number PyTorch's argument parser reads it as: a NumPy
    integer is an int, np.float64 / np.complex128 (subclasses of float / complex) are that
    number, and every other kind (bool_, float16, float32, complex64) goes through `float()`
    (so np.bool_(True) is 1.0 and np.complex64 loses its imaginary part, with NumPy's
    ComplexWarning). Anything else is returned as given."""
    if not isinstance(x, np.generic):
        return x
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, complex):
        return complex(x)
    if isinstance(x, np.complexfloating):
        warn_at_user("Casting complex values to real discards the imaginary part",
                     np.exceptions.ComplexWarning)
        return float(x.real)
    return float(x)


def _wrapped_dtype(x) -> dtype:
    if isinstance(x, np.generic):
        x = py_number(x)
    if isinstance(x, dtype):
        raise TypeError("result_type takes tensors and numbers, not dtypes")
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return int64
    if isinstance(x, float):
        return get_default_dtype()
    if isinstance(x, complex):
        return default_complex()
    raise OperandTypeError(f"expected a Tensor or a number, got {type(x).__name__}")


def can_cast(from_: dtype, to: dtype) -> bool:
    """PyTorch's same-kind rule: no cast to a lower category (float -> int, complex -> float)."""
    return from_._kind <= to._kind


# --- finfo / iinfo ----------------------------------------------------------

def _info_type(value, name: str) -> dtype:
    """finfo / iinfo's argument: a dtype, or a Python number type read as PyTorch reads it
    (float is float64, int int64); anything else refused in its parser's words."""
    if value.__class__ is dtype:
        return value
    if isinstance(value, builtins.type) and value in _PY_TYPES:
        return _PY_TYPES[value]
    raise TypeError(f"{name}(): argument 'type' (position 1) must be {_names.prefix}.dtype, "
                    f"not {builtins.type(value).__name__}")


class finfo:
    """Machine limits of a floating-point dtype (`ember.finfo(ember.float32).eps`)."""

    def __init__(self, type: dtype | None = None) -> None:
        type = get_default_dtype() if type is None else _info_type(type, "finfo")
        if type._kind not in (2, 3):
            p = _names.prefix  # PyTorch's wording, quotes and all
            raise TypeError(f"{p}.finfo() requires a floating point input type. Use {p}.iinfo "
                            f"to handle '{p}.finfo'")
        self.dtype = type.to_real().name
        info = ml_dtypes.finfo(type.to_real().np)
        self.bits = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.tiny)
        self.smallest_normal = self.tiny
        # PyTorch's resolution is 10**-precision, precision = floor(-log10(eps)).
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))

    def __eq__(self, other) -> bool:  # (equal limits of one dtype; unhashable, as PyTorch's)
        return isinstance(other, finfo) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype."""

    def __init__(self, type: dtype) -> None:
        type = _info_type(type, "iinfo")
        if type._kind in (2, 3):
            p = _names.prefix  # PyTorch's wording, quotes and all
            raise TypeError(f"{p}.iinfo() requires an integer input type. Use {p}.finfo to "
                            f"handle '{p}.iinfo'")
        if type._kind != 1:
            raise TypeError(f"{type!r} is not supported by {_names.prefix}.iinfo")
        info = np.iinfo(type.np)
        self.bits = info.bits
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = type.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# PyTorch's ScalarType names, which its messages print (`expected scalar type Float`)
SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                     "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                     "int8": "Char", "uint8": "Byte", "bool": "Bool",
                     "complex64": "ComplexFloat", "complex128": "ComplexDouble",
                     "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
                     "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}

# the eight dtypes that kept a legacy `torch.<Name>Tensor` type; the rest print `CPU<Name>Type`
_LEGACY_TYPES = {"float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8"}


def cpu_type_text(d: dtype) -> str:
    """A dtype as PyTorch's C++ messages print a tensor's type (`Tensor::toString`): its
    legacy type where it has one (`torch.FloatTensor`), else `CPUBoolType`-style."""
    name = SCALAR_TYPE_NAMES[d.name]
    return f"torch.{name}Tensor" if d.name in _LEGACY_TYPES else f"CPU{name}Type"


# the C++ names PyTorch's messages print for a dtype's scalar (`long int`, `c10::Half`)
CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                  "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
                  "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                  "bool": "bool", "complex64": "c10::complex<float>",
                  "complex128": "c10::complex<double>", "float8_e4m3fn": "c10::Float8_e4m3fn",
                  "float8_e5m2": "c10::Float8_e5m2", "uint16": "short unsigned int",
                  "uint32": "unsigned int", "uint64": "long unsigned int"}
