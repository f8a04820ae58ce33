"""Contractions written with the products and elementwise ops: outer (ger), inner,
tensordot (one permute-reshape-mm) and kron. No primitives of their own: each records the
nodes of the ops it is made of, as PyTorch's composites do."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._arg_parser_text import method_aware, need_tensors, touch_then_check
from ._common import type_name, write_out
from .matmul import mm
from .matmul_checks import need_operands
from .movement import unsafe_view


@method_aware
def outer(input: Tensor, vec2: Tensor, *, out=None) -> Tensor:
    """Outer product of two vectors (dtypes promote, as for `mul`)."""
    need_operands(input, vec2, "outer")
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    # (a column view by `view`, as PyTorch's kernel: its graph is MulBackward0 over ViewBackward0)
    return write_out(input.view(-1, 1) * vec2, out)


@method_aware
def inner(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Sum over the last dims of both; a plain product when either is 0-d."""
    need_operands(input, other, "inner")
    if input.ndim == 0 or other.ndim == 0:
        return write_out(input * other, out)
    if input._shape[-1] != other._shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input._shape)} and {list(other._shape)}"
        )
    return tensordot(input, other, ([-1], [-1]), out=out)


def _dims_lists(a: Tensor, b: Tensor, dims) -> tuple[list[int], list[int]]:
    """The contracted dims of `a` and `b` as given (an int d means a's last d, b's first d)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        d = int(dims)
        if d < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={d}")
        if d > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={d}")
        return list(range(-d, 0)), list(range(d))
    da, db = dims
    da = [da] if isinstance(da, (int, np.integer)) else list(da)
    db = [db] if isinstance(db, (int, np.integer)) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    return [int(d) for d in da], [int(d) for d in db]


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """Contract `dims` of `a` with `dims` of `b`: one permute-reshape-mm."""
    from .._view import wrap_dim

    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        # (torch's Python tensordot reads `dim()` of both for an int `dims`, else its
        # parser refuses them)
        if isinstance(dims, int):
            touch_then_check(a, "dim", "tensordot", "input", 1)
            touch_then_check(b, "dim", "tensordot", "other", 2)
        need_tensors("tensordot", ("input", 1, a), ("other", 2, b))
    if a._dtype is not b._dtype:
        raise RuntimeError("both inputs should have same dtype")
    raw_a, raw_b = _dims_lists(a, b, dims)
    da = [wrap_dim(d, a.ndim) for d in raw_a]
    db = [wrap_dim(d, b.ndim) for d in raw_b]
    for dl in (da, db):
        for k, d in enumerate(dl):
            if d in dl[:k]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    k = 1
    for i, j, ri, rj in zip(da, db, raw_a, raw_b):
        # a contracted dim of size 1 meets any size: the other side is summed over it first
        if b._shape[j] == 1:
            a = a.sum(i, keepdim=True)
        elif a._shape[i] == 1:
            b = b.sum(j, keepdim=True)
        elif a._shape[i] != b._shape[j]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a._shape[i]} in dim "
                f"{ri} and second has size {b._shape[j]} in dim {rj}"
            )
        else:
            k *= a._shape[i]
    free_a = [i for i in range(a.ndim) if i not in da]
    free_b = [j for j in range(b.ndim) if j not in db]
    if isinstance(out, Tensor) and out._dtype is not a._dtype:  # (it writes, never casts)
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype "
                           f"{type_name(a._dtype)}, but got an output tensor with dtype "
                           f"{type_name(out._dtype)}")
    out_shape = tuple(a._shape[i] for i in free_a) + tuple(b._shape[j] for j in free_b)
    m = int(np.prod([a._shape[i] for i in free_a], dtype=np.int64))
    n = int(np.prod([b._shape[j] for j in free_b], dtype=np.int64))
    left = a.permute(free_a + da).reshape(m, k)
    right = b.permute(db + free_b).reshape(k, n)
    return write_out(mm(left, right).reshape(out_shape), out)


def kron(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Kronecker product; the operand with fewer dims is padded with leading 1s."""
    need_tensors("kron", ("input", 1, input), ("other", 2, other))
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input._shape)
    sb = (1,) * (nd - other.ndim) + tuple(other._shape)
    # (size-1 dims put in: a view of each operand, which PyTorch takes as _unsafe_view)
    a = unsafe_view(input, [s for n in sa for s in (n, 1)])
    b = unsafe_view(other, [s for n in sb for s in (1, n)])
    prod, size = a * b, [x * y for x, y in zip(sa, sb)]
    if not prod.is_contiguous():
        return write_out(prod.reshape(size), out)
    # (a fresh contiguous product: reshaped as a new tensor, PyTorch's _unsafe_view)
    return write_out(unsafe_view(prod, size), out)


@method_aware
def ger(input: Tensor, vec2: Tensor, *, out=None) -> Tensor:
    """`outer` under its old name, by which the parser names it."""
    need_operands(input, vec2, "ger")
    return outer(input, vec2, out=out)


TENSOR_METHODS = {"inner": inner, "outer": outer, "ger": ger, "kron": kron}

__all__ = ["inner", "outer", "ger", "kron", "tensordot"]
