"""Matrix products: matmul / @ with PyTorch's rank rules, mm, bmm, mv, dot.

float16 / bfloat16 products accumulate in float32 and round once.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import broadcast_shapes
from ._common import write_out
from .registry import Primitive, apply, defvjp

_LOW = (np.dtype(np.float16), dt.bfloat16.np)


def _matmul_kernel(a, b):
    if a.dtype in _LOW:
        return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return np.matmul(a, b)


def _matmul_meta(a, b):
    if a.ndim == 1 and b.ndim == 1:
        return (), a._dtype
    sa = a._shape if a.ndim > 1 else (1,) + a._shape
    sb = b._shape if b.ndim > 1 else b._shape + (1,)
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    shape = batch + (sa[-2], sb[-1])
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return shape, a._dtype


def _grad_a(g, out, a, b):
    bc = b.conj() if b.dtype.is_complex else b
    if a.ndim == 1 and b.ndim == 1:
        return g * bc
    if b.ndim == 1:
        return g.unsqueeze(-1) * bc
    if a.ndim == 1:
        return (g.unsqueeze(-2) @ bc.mT).squeeze(-2)
    return g @ bc.mT


def _grad_b(g, out, a, b):
    ac = a.conj() if a.dtype.is_complex else a
    if a.ndim == 1 and b.ndim == 1:
        return g * ac
    if a.ndim == 1:
        return ac.unsqueeze(-1) * g.unsqueeze(-2)
    if b.ndim == 1:
        return (ac.mT @ g.unsqueeze(-1)).squeeze(-1)
    return ac.mT @ g


def _product(name: str, grad_name: str) -> Primitive:
    prim = Primitive(name, _matmul_kernel, _matmul_meta, grad_name=grad_name)
    defvjp(prim, _grad_a, _grad_b, reads=((1,), (0,)))
    return prim


mm_p = _product("mm", "MmBackward0")
bmm_p = _product("bmm", "BmmBackward0")
mv_p = _product("mv", "MvBackward0")
dot_p = _product("dot", "DotBackward0")
matmul_p = _product("matmul", "MatmulBackward0")


def _check(a: Tensor, b: Tensor, name: str) -> None:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{name}(): argument 'input' and 'other' must be Tensor")
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to {name} need to be at least 1D, but they are {a.ndim}D and "
            f"{b.ndim}D"
        )
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_tn(a)} != {_tn(b)}"
        )


def _tn(t: Tensor) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}.get(
        t._dtype.name, t._dtype.name)


def _inner_mismatch(a: Tensor, b: Tensor) -> RuntimeError:
    if a.ndim == 2 and b.ndim == 2:
        return RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a._shape[0]}x{a._shape[1]} and "
            f"{b._shape[0]}x{b._shape[1]})"
        )
    if a.ndim == 1 and b.ndim == 1:
        return RuntimeError(
            f"inconsistent tensor size, expected tensor [{a._shape[0]}] and src [{b._shape[0]}] "
            f"to have the same number of elements, but got {a._shape[0]} and {b._shape[0]} "
            "elements respectively"
        )
    if b.ndim == 1:
        return RuntimeError(
            f"size mismatch, got input ({a._shape[-2]}), mat ({a._shape[-2]}x{a._shape[-1]}), "
            f"vec ({b._shape[0]})"
        )
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: "
        f"[{b._shape[0] if b.ndim > 2 else 1}, {a._shape[-1]}] but got: "
        f"[{b._shape[0] if b.ndim > 2 else 1}, {b._shape[-2]}]."
    )


def matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dims."""
    _check(input, other, "matmul")
    k_a = input._shape[-1]
    k_b = other._shape[0] if other.ndim == 1 else other._shape[-2]
    if k_a != k_b:
        raise _inner_mismatch(input, other)
    na, nb = input.ndim, other.ndim
    if na == 2 and nb == 2:
        prim = mm_p
    elif na == 1 and nb == 1:
        prim = dot_p
    elif na == 2 and nb == 1:
        prim = mv_p
    elif na == 3 and nb == 3 and input._shape[0] == other._shape[0]:
        prim = bmm_p
    else:
        prim = matmul_p
    return write_out(apply(prim, input, other), out)


def mm(input: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    _check(input, mat2, "mm")
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    if input._shape[1] != mat2._shape[0]:
        raise _inner_mismatch(input, mat2)
    return write_out(apply(mm_p, input, mat2), out)


def bmm(input: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    _check(input, mat2, "bmm")
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else
                           "batch2 must be a 3D tensor")
    if input._shape[0] != mat2._shape[0] or input._shape[2] != mat2._shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input._shape[0]}, {input._shape[2]}] but got: [{mat2._shape[0]}, "
            f"{mat2._shape[1]}]."
        )
    return write_out(apply(bmm_p, input, mat2), out)


def mv(input: Tensor, vec: Tensor, *, out=None) -> Tensor:
    _check(input, vec, "mv")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    if input._shape[1] != vec._shape[0]:
        raise _inner_mismatch(input, vec)
    return write_out(apply(mv_p, input, vec), out)


def dot(input: Tensor, tensor: Tensor, *, out=None) -> Tensor:
    _check(input, tensor, "dot")
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors"
        )
    if input._shape[0] != tensor._shape[0]:
        raise _inner_mismatch(input, tensor)
    return write_out(apply(dot_p, input, tensor), out)


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _forward_matmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


TENSOR_METHODS = {
    "matmul": matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot,
    "__matmul__": _forward_matmul, "__rmatmul__": _rmatmul,
}

__all__ = ["matmul", "mm", "bmm", "mv", "dot"]
