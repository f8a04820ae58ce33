"""`torch.hash_tensor`: a 64-bit hash of a tensor's elements, whole or per row, as PyTorch
2.13 computes it (mode 0, its only one): each element widened to its 64-bit kind (a float
to float64, an integer or bool to int64, sign extended), its bits read as uint64, the
whole XOR-reduced. Equal tensors hash equal on every machine (no float arithmetic), so a
program may compare hashes saved elsewhere. Not differentiable: the result is uint64."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import wrap_dim
from ._arg_parser_text import not_tensor, wrong_type
from ._common import type_name, write_exact
from .reduce import norm_dims, reduce_p, reduced_shape, reduction
from .registry import apply, nondifferentiable

# PyTorch's xor kernel covers the signed integers, bool and the floats, no wider unsigned
# or complex type
_REFUSED = (dt.uint16, dt.uint32, dt.uint64, dt.complex64, dt.complex128)


def _widened_bits(a: np.ndarray) -> np.ndarray:
    """`a`'s elements as the uint64 bits of their 64-bit kind."""
    wide = a.astype(np.float64 if a.dtype.kind == "f" or a.dtype == dt.bfloat16.np
                    else np.int64)
    return wide.view(np.uint64)


def _hash_kernel(a, *, dims, keepdim):
    axis = tuple(dims) if a.ndim else None
    return np.asarray(np.bitwise_xor.reduce(_widened_bits(a), axis=axis, keepdims=keepdim),
                      dtype=np.uint64)


HASH_XOR = reduction("hash_tensor", _hash_kernel,
                     lambda x, *, dims, keepdim: (reduced_shape(x._shape, dims, keepdim),
                                                  dt.uint64))
nondifferentiable(HASH_XOR)


def hash_tensor(input: Tensor, dim=None, *, keepdim: bool = False, mode: int = 0,
                out: Tensor | None = None) -> Tensor:
    """The XOR of the elements' 64-bit patterns over `dim` (all dims by default), uint64."""
    if not isinstance(input, Tensor):
        raise not_tensor("hash_tensor", "input", 1, input)
    if keepdim.__class__ is not bool:
        raise wrong_type("hash_tensor", "keepdim", None, "bool", keepdim)
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    given = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if input.numel() == 0 and not given:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    dims = norm_dims(dim, input.ndim)
    for d in given:
        if input.ndim and input._shape[wrap_dim(d, input.ndim)] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    if input._dtype in _REFUSED:
        raise NotImplementedError(
            f'"xor_sum_cpu" not implemented for \'{type_name(input._dtype)}\'')
    if out is not None and out._dtype is not dt.uint64:
        raise RuntimeError(f"Expected result to be of dtype uint64, but got "
                           f"{type_name(out._dtype)}")
    dims = dims if input.ndim else ()
    return write_exact(apply(reduce_p, input, fn=HASH_XOR, dims=dims, keepdim=keepdim), out)


TENSOR_METHODS = {"hash_tensor": hash_tensor}

__all__ = ["hash_tensor"]
