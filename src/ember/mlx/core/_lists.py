"""Nested Python lists read as MLX reads them: the shape from the first element at each
depth, every element checked against it, the dtype from the highest scalar kind (an int
past int32 makes int64), arrays among the elements stacked."""

from __future__ import annotations

import numpy as np

import ember as E

from . import _array as A
from . import _dtypes as D
from ._binding import type_name
from ._dtypes import Dtype

_BOOL, _INT, _FLOAT, _COMPLEX = range(4)  # MLX's order of Python scalar kinds
_KIND_DTYPE = {_BOOL: D.bool_, _INT: D.int32, _FLOAT: D.float32, _COMPLEX: D.complex64}


def convert_list(val, dtype: Dtype | None) -> tuple:
    shape: list = []
    level = val
    while True:  # the shape, from the first element at each depth
        shape.append(len(level))
        if not level:
            break
        first = level[0]
        if isinstance(first, A.array):
            shape.extend(first.shape)
            break
        if not isinstance(first, A._SEQUENCES):
            break
        level = first
    seen = {"wide": False, "arrays": False}
    kind = _flat_kind(val, seen) if len(shape) == 1 else None
    if kind is None:
        kind = _list_kind(val, shape, 0, seen)
    if seen["arrays"]:  # (MLX stacks the elements, each made an array in `dtype`)
        from ._ops import stack
        return A._convert(stack([A.array(v, dtype) for v in val]), None)
    dt = dtype
    if dt is None:
        dt = D.int64 if kind == _INT and seen["wide"] else _KIND_DTYPE[kind]
    a = np.array(val, dtype=np.complex128 if kind == _COMPLEX else None)
    if kind == _INT and dtype is not None and a.size:
        _check_ints(a, dtype)
    return E.tensor(A._to_carrier(a, dt)), dt


def _check_ints(a: np.ndarray, dtype: Dtype) -> None:
    """MLX reads a list of ints given an integer or bool dtype into a C vector of int64,
    uint64 or uint32 (for those dtypes) or else of int32, refusing an element outside
    that type with its failed cast (floating dtypes take any int64)."""
    if dtype.kind in "fc" or dtype is D.int64:
        return
    lo, hi = {D.uint64: (0, 2**64), D.uint32: (0, 2**32)}.get(dtype, (-(2**31), 2**31))
    if not (lo <= int(a.min()) and int(a.max()) < hi):
        raise RuntimeError("std::bad_cast")


_KIND_OF = {bool: _BOOL, int: _INT, float: _FLOAT, complex: _COMPLEX}


def _flat_kind(seq, seen: dict) -> int | None:
    """`_list_kind` of a flat list of plain Python numbers, at C speed (None for any
    other list)."""
    types = set(map(type, seq))
    if not types or not types <= _KIND_OF.keys():
        return None
    if int in types:
        ints = [v for v in seq if v.__class__ is int]
        lo, hi = A._python_int(min(ints)), A._python_int(max(ints))
        seen["wide"] = not (-(2**31) <= lo and hi < 2**31)
    return max(_KIND_OF[t] for t in types)


def _list_kind(seq, shape: list, depth: int, seen: dict) -> int:
    """The highest scalar kind in `seq` (float for an empty one), checking that it has the
    shape its first elements gave and holds only Python numbers or arrays."""
    if depth >= len(shape):
        raise ValueError("Initialization encountered extra dimension.")
    if len(seq) != shape[depth]:
        raise ValueError("Initialization encountered non-uniform length.")
    if not seq:
        return _FLOAT
    kind = _BOOL
    innermost = depth + 1 == len(shape)
    after_list = isinstance(seq[0], list)  # (MLX then reads its siblings as lists too)
    for v in seq:
        if after_list and isinstance(v, tuple):
            raise ValueError("Invalid type tuple received in array initialization.")
        if isinstance(v, A._SEQUENCES):
            k = _list_kind(v, shape, depth + 1, seen)
        elif isinstance(v, A.array):
            seen["arrays"] = True
            if v.shape != tuple(shape[depth + 1:]):
                raise ValueError("Initialization encountered non-uniform length.")
            k = _BOOL
        else:
            if isinstance(v, bool):
                k = _BOOL
            elif isinstance(v, int):
                k = _INT
                if not -(2**31) <= A._python_int(v) < 2**31:
                    seen["wide"] = True
            elif isinstance(v, float):
                k = _FLOAT
            elif isinstance(v, complex):
                k = _COMPLEX
            else:
                raise ValueError(f"Invalid type {type_name(v)} received in array "
                                 "initialization.")
            if not innermost:
                raise ValueError("Initialization encountered non-uniform length.")
        kind = max(kind, k)
    return kind
